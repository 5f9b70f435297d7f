/**
 * Test-side helper (not used by the server): drives the simulator — or any Responses WebSocket
 * endpoint — with the real openai-node `ResponsesWS` client, one turn at a time, and replays
 * the received events through the SDK's `ResponseStream` accumulator so ordering mistakes
 * (spec §3.4) fail loudly. Used by test/node/simulator-*.test.ts; reusable by other tests.
 */
import OpenAI from "openai";
import { ResponseStream } from "openai/lib/responses/ResponseStream";
import type { Response, ResponsesServerEvent } from "openai/resources/responses/responses";
import { ResponsesWS } from "openai/resources/responses/ws";

/** What one `turn` observed. */
export interface WsTurnResult {
  /** Every server event of the turn, in arrival order (includes an `error` frame if any). */
  events: ResponsesServerEvent[];
  /** The terminal Response (completed/incomplete/failed), or null on error/close. */
  response: Response | null;
  /** The `error` frame (request-level ones carry `status`), or null. */
  error: (Extract<ResponsesServerEvent, { type: "error" }> & { status?: number }) | null;
  /** Close code when the socket closed before a terminal event, else null. */
  closeCode: number | null;
}

const TERMINAL = new Set(["response.completed", "response.incomplete", "response.failed", "error"]);

/** Replays `events` through `ResponseStream.fromReadableStream` and returns its final response. */
export async function accumulateWithSdk(events: ResponsesServerEvent[]): Promise<Response> {
  const body = `${events.map((e) => JSON.stringify(e)).join("\n")}\n`;
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(new TextEncoder().encode(body));
      controller.close();
    },
  });
  return ResponseStream.fromReadableStream(stream as never).finalResponse();
}

/** One WebSocket connection to `${baseUrl}/v1/responses` through openai-node's ResponsesWS. */
export class WsTestSession {
  /** The SDK socket wrapper. */
  readonly ws: ResponsesWS;
  #events: ResponsesServerEvent[] = [];
  #closeCode: number | null = null;
  #wake: (() => void) | null = null;

  /** Opens the socket immediately (`baseUrl` without `/v1`, e.g. the simulator's `url`). */
  constructor(baseUrl: string, apiKey = "sim-test-key") {
    const client = new OpenAI({ apiKey, baseURL: `${baseUrl}/v1`, maxRetries: 0 });
    this.ws = new ResponsesWS(client);
    this.ws.on("event", (event) => {
      this.#events.push(event);
      this.#wake?.();
    });
    this.ws.on("error", () => {
      // error frames are also delivered on "event"; transport errors end in "close"
    });
    this.ws.on("close", (code) => {
      this.#closeCode = code;
      this.#wake?.();
    });
  }

  /** Close code once the socket closed, else null. */
  get closeCode(): number | null {
    return this.#closeCode;
  }

  /**
   * Sends `{type:"response.create", ...params}` (one turn at a time: do not call concurrently
   * on one session) and resolves when a terminal event or error
   * frame arrives or the socket closes. Rejects after `timeoutMs` (default 10 000 ms).
   */
  async turn(params: Record<string, unknown>, timeoutMs = 10_000): Promise<WsTurnResult> {
    const start = this.#events.length;
    this.ws.send({ type: "response.create", ...params } as never);
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const events = this.#events.slice(start);
      const last = events[events.length - 1];
      if (last && TERMINAL.has(last.type)) {
        const error = last.type === "error" ? last : null;
        const response = last.type !== "error" && "response" in last ? (last.response as Response) : null;
        return { events, response, error, closeCode: null };
      }
      if (this.#closeCode !== null)
        return { events, response: null, error: null, closeCode: this.#closeCode };
      const remaining = deadline - Date.now();
      if (remaining <= 0) throw new Error(`WsTestSession.turn timed out after ${timeoutMs} ms`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, remaining);
        this.#wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.#wake = null;
    }
  }

  /** Closes the socket (code 1000) and waits for the close. */
  async close(): Promise<void> {
    if (this.#closeCode !== null) return;
    const closed = new Promise<void>((resolve) => this.ws.on("close", () => resolve()));
    this.ws.close({ code: 1000, reason: "done" });
    await closed;
  }
}
