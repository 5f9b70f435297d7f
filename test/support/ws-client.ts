/**
 * A test client for Deltagate's WebSocket, running inside workerd: it upgrades through the real
 * Worker (`exports.default.fetch`), accepts the client end and records every frame. Helpers wait
 * for a lane's terminal event and check each event stream with the `openai` SDK's own
 * accumulator (`ResponseStream.fromReadableStream(...).finalResponse()`).
 */
import { exports } from "cloudflare:workers";
import { expect } from "vitest";
import { type Frame, validateWithSdk } from "./sdk-events.ts";
import { testId } from "./test-id.ts";

export { type Frame, validateWithSdk };

/** API keys configured for the `workers` test project (vitest.config.ts). */
export const KEY_A = "dg-test-a";
export const KEY_B = "dg-test-b";

const TERMINAL = new Set(["response.completed", "response.failed", "response.incomplete", "error"]);

/** A unique session name per test (Durable Objects must not be shared between tests). */
export function uniqueSession(label: string): string {
  return `${label}-${testId()}`;
}

/** Sends an HTTP request through the real Worker. */
export function workerFetch(path: string, init?: RequestInit): Promise<Response> {
  return exports.default.fetch(new Request(`http://deltagate.test${path}`, init));
}

/** One open test socket. */
export class TestSocket {
  readonly frames: Frame[] = [];
  private readonly waiters: Array<() => void> = [];
  closeEvent: { code: number; reason: string } | null = null;
  readonly ws: WebSocket;

  constructor(ws: WebSocket) {
    this.ws = ws;
    ws.addEventListener("message", (event) => {
      this.frames.push(JSON.parse(String(event.data)) as Frame);
      this.wake();
    });
    ws.addEventListener("close", (event) => {
      this.closeEvent = { code: event.code, reason: event.reason };
      this.wake();
    });
  }

  private wake(): void {
    for (const w of this.waiters.splice(0)) w();
  }

  /** Sends a JSON event (or a raw string / bytes as given). */
  send(event: unknown): void {
    this.ws.send(typeof event === "string" || event instanceof ArrayBuffer ? event : JSON.stringify(event));
  }

  /** Waits until `predicate` holds over the frames received so far. */
  async until(predicate: (frames: Frame[]) => boolean, timeoutMs = 15_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!predicate(this.frames)) {
      if (Date.now() > deadline)
        throw new Error(`timed out; frames: ${JSON.stringify(this.frames.map((f) => f.type))}`);
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve);
        setTimeout(resolve, 50);
      });
    }
  }

  /** Waits for the socket to close. */
  async closed(timeoutMs = 15_000): Promise<{ code: number; reason: string }> {
    await this.until(() => this.closeEvent !== null, timeoutMs);
    return this.closeEvent!;
  }

  /**
   * Waits for the `n`-th (0-based) terminal frame of a lane (`stream_id`, or the default lane) and
   * returns that response's frames: from its `response.created` (or the request-level `error`) on.
   */
  async turn(n = 0, streamId?: string): Promise<Frame[]> {
    const lane = () => this.frames.filter((f) => (f.stream_id ?? undefined) === streamId);
    await this.until(() => lane().filter((f) => TERMINAL.has(f.type)).length > n);
    const frames = lane();
    let seen = -1;
    let start = 0;
    for (let i = 0; i < frames.length; i++) {
      const f = frames[i]!;
      if (f.type === "response.created" || (f.type === "error" && "status" in f)) start = i;
      if (TERMINAL.has(f.type) && ++seen === n) return frames.slice(f.type === "error" ? i : start, i + 1);
    }
    throw new Error("unreachable");
  }

  close(code = 1000): void {
    this.ws.close(code, "test done");
  }
}

/** Opens a WebSocket through the Worker. */
export async function connect(
  options: { key?: string; session?: string; headers?: Record<string, string> } = {},
) {
  const headers: Record<string, string> = { upgrade: "websocket", ...(options.headers ?? {}) };
  if (options.key !== "") headers.authorization = `Bearer ${options.key ?? KEY_A}`;
  if (options.session) headers["session-id"] = options.session;
  const res = await workerFetch("/v1/responses", { headers });
  expect(res.status, await peek(res)).toBe(101);
  const ws = res.webSocket!;
  ws.accept();
  return new TestSocket(ws);
}

async function peek(res: Response): Promise<string> {
  return res.status === 101 ? "" : res.clone().text();
}

/** The text of the final assistant message of a response's frames. */
export function outputText(frames: Frame[]): string {
  const terminal = frames[frames.length - 1] as { response?: { output?: Array<Record<string, unknown>> } };
  const parts: string[] = [];
  for (const item of terminal.response?.output ?? []) {
    if (item.type !== "message") continue;
    for (const part of (item.content as Array<{ type: string; text?: string }>) ?? []) {
      if (part.type === "output_text" && part.text) parts.push(part.text);
    }
  }
  return parts.join("");
}

/** Reads the simulator's recorded requests whose raw body contains `marker`. */
export async function simulatorRequests(
  simulatorUrl: string,
  marker: string,
): Promise<Array<Record<string, unknown>>> {
  const res = await fetch(`${simulatorUrl}/_sim/requests?contains=${encodeURIComponent(marker)}`);
  const body = (await res.json()) as { data: Array<Record<string, unknown>> };
  return body.data;
}
