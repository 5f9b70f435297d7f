/**
 * WebSocket-mode turns through Deltagate with the `openai` SDK's `ResponsesWS`, the way Codex
 * talks to it: one socket per agent session, store:false, and after the first turn only the delta
 * (`previous_response_id` + the new `function_call_output`s).
 * Owns the socket of one loop (open → turns → close) and the exact count of bytes sent: frames go
 * out through `sendRaw` with our own serialization, so the count is the frame's payload.
 */
import OpenAI from "openai";
import type { Response as OpenAIResponse, ResponsesServerEvent } from "openai/resources/responses/responses";
import { ResponsesWS } from "openai/resources/responses/ws";
import type { TurnInput, TurnResult, TurnTransport } from "./loop.ts";
import { BENCH_TOOLS } from "./workload.ts";

/** Longest one turn may take, in ms. */
const TURN_TIMEOUT_MS = 30_000;
/** Longest the WebSocket handshake may take, in ms. */
const CONNECT_TIMEOUT_MS = 15_000;
/** How long `close()` waits for the close handshake, in ms. */
const CLOSE_WAIT_MS = 1_000;

/** A WebSocket transport with its socket's lifecycle. */
export interface WsTransport extends TurnTransport {
  /**
   * Waits until the socket is open.
   * @throws {Error} when the handshake fails, the socket closes, or 15 s pass.
   */
  opened(): Promise<void>;
  /** Closes the socket with 1000 and waits (≤ 1 s) for the close handshake. Never throws. */
  close(): Promise<void>;
}

/**
 * Opens a `ResponsesWS` to `{baseURL}/responses` (the connection starts immediately).
 * @param baseURL Deltagate's base URL including `/v1`.
 */
export function wsTransport(options: { baseURL: string; apiKey: string; model: string }): WsTransport {
  const client = new OpenAI({ apiKey: options.apiKey, baseURL: options.baseURL, maxRetries: 0 });
  const ws = new ResponsesWS(client);
  let closed: { code: number; reason: string } | null = null;
  /** Rejects the turn in flight (if any) on transport trouble. */
  let failTurn: ((error: Error) => void) | null = null;
  ws.on("error", (error) => failTurn?.(new Error(`error: ${error.message}`)));
  ws.on("close", (code, reason) => {
    closed = { code, reason };
    failTurn?.(new Error(`the WebSocket closed (${code} ${reason}) before the turn completed`));
  });

  return {
    opened(): Promise<void> {
      return new Promise((resolve, reject) => {
        if (ws.socket.readyState === 1) return resolve();
        const timer = setTimeout(
          () => reject(new Error(`no WebSocket open within ${CONNECT_TIMEOUT_MS} ms`)),
          CONNECT_TIMEOUT_MS,
        );
        ws.socket.once("open", () => {
          clearTimeout(timer);
          resolve();
        });
        ws.socket.once("close", (code: number, reason: string) => {
          clearTimeout(timer);
          reject(new Error(`the WebSocket handshake failed (${code} ${reason})`));
        });
      });
    },

    turn({ newItems, previous }: TurnInput): Promise<TurnResult> {
      return new Promise((resolve, reject) => {
        if (closed) {
          reject(new Error(`the WebSocket is closed (${closed.code} ${closed.reason})`));
          return;
        }
        const frame = JSON.stringify({
          type: "response.create",
          model: options.model,
          tools: BENCH_TOOLS,
          store: false,
          input: newItems,
          ...(previous ? { previous_response_id: previous.id } : {}),
        });
        const clientBytes = Buffer.byteLength(frame, "utf8");
        let ttftMs: number | null = null;
        let started = performance.now();
        const timer = setTimeout(
          () => done(new Error(`no terminal event within ${TURN_TIMEOUT_MS} ms`)),
          TURN_TIMEOUT_MS,
        );
        const onEvent = (event: ResponsesServerEvent): void => {
          if (
            ttftMs === null &&
            (event.type === "response.output_text.delta" || event.type === "response.output_item.added")
          ) {
            ttftMs = performance.now() - started;
          }
          if (event.type === "response.completed") done(null, event.response);
          else if (event.type === "response.failed" || event.type === "response.incomplete") {
            const detail = event.response.error ?? event.response.incomplete_details;
            done(new Error(`${event.type}: ${JSON.stringify(detail)}`));
          } else if (event.type === "error") {
            const detail =
              "error" in event
                ? `${event.status ?? ""} ${event.error.code ?? ""}: ${event.error.message}`
                : `${event.code ?? ""}: ${event.message}`;
            done(new Error(`error event ${detail}`));
          }
        };
        function done(error: Error | null, response?: OpenAIResponse): void {
          const latencyMs = performance.now() - started;
          clearTimeout(timer);
          ws.off("event", onEvent);
          failTurn = null;
          if (error || !response) reject(error ?? new Error("no response"));
          else resolve({ response, sample: { latencyMs, ttftMs: ttftMs ?? latencyMs, clientBytes } });
        }
        failTurn = (error) => done(error);
        ws.on("event", onEvent);
        started = performance.now();
        ws.sendRaw(frame);
      });
    },

    close(): Promise<void> {
      if (closed) return Promise.resolve();
      return new Promise((resolve) => {
        const timer = setTimeout(resolve, CLOSE_WAIT_MS);
        ws.on("close", () => {
          clearTimeout(timer);
          resolve();
        });
        ws.close({ code: 1000, reason: "bench loop done" });
      });
    },
  };
}
