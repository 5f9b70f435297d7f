/**
 * Small node:http helpers for the simulator endpoints: body reading, JSON and error replies,
 * and client-disconnect tracking that marks a record `aborted` and aborts the pacing signal.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { errorEnvelope, invalidRequest, type SimError } from "./errors.ts";
import { newId } from "./ids.ts";
import { isJsonObject, type JsonObject } from "./json.ts";
import { keyFingerprint, type RecordedRequest, type RecordedTransport, type Recorder } from "./recorder.ts";
import type { SimState } from "./state.ts";

/** Maximum accepted request body, bytes (64 MiB). */
export const MAX_BODY_BYTES = 64 * 1024 * 1024;

/** Reads the whole request body as UTF-8 text; rejects with a 413 SimError beyond MAX_BODY_BYTES. */
export function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        const err = invalidRequest("Request body too large.");
        reject(Object.assign(err, { status: 413 }));
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

/** Parses `text` as a JSON object; returns null when it is not one. */
export function parseJsonObject(text: string): JsonObject | null {
  try {
    const value: unknown = JSON.parse(text);
    return isJsonObject(value) ? value : null;
  } catch {
    return null;
  }
}

/** Common response headers: an `x-request-id` and the simulator marker. */
export function baseHeaders(): Record<string, string> {
  return { "x-request-id": newId("req_"), "x-deltagate-simulator": "1" };
}

/** Sends `body` as JSON with `status`. */
export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    ...baseHeaders(),
    "content-type": "application/json",
    "content-length": String(Buffer.byteLength(text)),
  });
  res.end(text);
}

/** Sends the OpenAI error envelope for `err` with its status. */
export function sendError(res: ServerResponse, err: SimError): void {
  sendJson(res, err.status, errorEnvelope(err));
}

/** Handle returned by `trackDisconnect`. */
export interface DisconnectTracker {
  /** Aborted when the client goes away before the response finished (or on `drop`). */
  signal: AbortSignal;
  /** Destroys the connection on purpose (simulated failure): not recorded as `aborted`. */
  drop: () => void;
}

/**
 * Watches `res`: if it closes before `end()` finished and not via `drop()`, sets
 * `record.aborted = true` (notifying the recorder) and aborts the returned signal.
 */
export function trackDisconnect(
  res: ServerResponse,
  record: RecordedRequest,
  recorder: Recorder,
): DisconnectTracker {
  const controller = new AbortController();
  let dropping = false;
  res.on("close", () => {
    if (!res.writableFinished && !dropping) {
      record.aborted = true;
      recorder.changed();
    }
    controller.abort();
  });
  return {
    signal: controller.signal,
    drop: () => {
      dropping = true;
      res.socket?.destroy();
      res.destroy();
    },
  };
}

/**
 * Writes `text` as its own `res.write` and resolves once it was handed to the socket (write
 * callback), so every event is a separate write and nothing is lost if the connection is
 * dropped right after. Resolves (never rejects) on write errors; the close handler reports those.
 */
export function writeFlushed(res: ServerResponse, text: string): Promise<void> {
  return new Promise((resolve) => {
    if (res.destroyed) return resolve();
    res.write(text, () => resolve());
  });
}

/** A POST whose body has arrived and been recorded. */
export interface ReceivedPost {
  /** The parsed JSON object body, or null when it is not one. */
  body: JsonObject | null;
  record: RecordedRequest;
  /** When simulated inference may start (ms): once the whole body has arrived. */
  modelStartMs: number;
  /** Records the final status (null: none delivered) and logs the request with its duration. */
  finish(status: number | null, note?: string): void;
}

/**
 * Reads, parses and records a POST body. Simulated inference starts only once the whole request
 * has arrived: a real server cannot prefill a prompt it has not received (a slow client uplink
 * must not overlap with model time).
 */
export async function receivePost(
  state: SimState,
  req: IncomingMessage,
  transport: RecordedTransport,
  path: string,
): Promise<ReceivedPost> {
  const startMs = Date.now();
  const raw = await readBody(req);
  const modelStartMs = Date.now();
  const body = parseJsonObject(raw);
  const record = state.recorder.begin(transport, path, raw, body, keyFingerprint(req.headers.authorization));
  const finish = (status: number | null, note = ""): void => {
    record.status = status;
    state.recorder.changed();
    state.log(`POST ${path} → ${status ?? "no status"} ${note}(${Date.now() - startMs} ms)`);
  };
  return { body, record, modelStartMs, finish };
}
