/**
 * Request recorder: every request the simulator receives (HTTP bodies and WS frames) is kept
 * in memory so tests and `/_sim/requests` can inspect what Deltagate actually sent upstream,
 * whether the client went away mid-stream (`aborted`) and the final status.
 */

import { createHash } from "node:crypto";

/** Which endpoint family received the request. */
export type RecordedTransport = "http" | "ws" | "chat" | "moderations" | "anthropic" | "gemini";

/** One received request or WS frame. Fields are updated in place while it is processed. */
export interface RecordedRequest {
  /** 1-based arrival order. */
  seq: number;
  /** Arrival time, ms since epoch. */
  at: number;
  transport: RecordedTransport;
  /** Request path without query (WS frames: the upgrade path). */
  path: string;
  /** Raw request body / WS frame size in bytes. */
  bytes: number;
  /** Parsed JSON body (null when it did not parse). */
  body: unknown;
  /** Items in the effective context after resolving previous_response_id (null if never resolved). */
  contextItemCount: number | null;
  /** Items in this request's own input (null if unknown). */
  inputItemCount: number | null;
  /** `previous_response_id` of the request, or null. */
  previousResponseId: string | null;
  /** True when the client disconnected before the response finished. */
  aborted: boolean;
  /**
   * HTTP status sent (WS: 200 for a completed response, else the error frame's status); null
   * while in progress or when the connection was dropped on purpose before a status existed.
   */
  status: number | null;
  /**
   * Fault applied to this request: "before", "midstream", "ws_drop" (socket dropped before
   * answering), "not_found" (seeded `previous_response_not_found`), "ws_drop_after" (answered,
   * then the socket dropped), "ws_limit" (`websocket_connection_limit_reached`), or null.
   */
  simulatedFailure: string | null;
  /** WS frames: the id of the connection that carried it (`/_sim/ws-connections`); else null. */
  connectionId: number | null;
  /**
   * Which bearer key the request (WS frames: their connection's upgrade) carried, as
   * `keyFingerprint` computes it, or null when none: tests can tell which key Deltagate used
   * without the simulator keeping a credential.
   */
  keyFingerprint: string | null;
  /** Raw body text (used by `contains` filtering; not serialized by `/_sim/requests`). */
  rawText: string;
}

/** Public JSON form of a record (without `rawText`). */
export type RecordedRequestJson = Omit<RecordedRequest, "rawText">;

/** In-memory request log with filtering and waiting. */
export class Recorder {
  readonly #records: RecordedRequest[] = [];
  #seq = 0;
  readonly #waiters = new Set<() => void>();

  /** Starts a record for a request that just arrived; returns the live (mutable) record. */
  begin(
    transport: RecordedTransport,
    path: string,
    rawText: string,
    body: unknown,
    keyFingerprint: string | null = null,
  ): RecordedRequest {
    const record: RecordedRequest = {
      seq: ++this.#seq,
      at: Date.now(),
      transport,
      path,
      bytes: Buffer.byteLength(rawText, "utf8"),
      body,
      contextItemCount: null,
      inputItemCount: null,
      previousResponseId: null,
      aborted: false,
      status: null,
      simulatedFailure: null,
      connectionId: null,
      keyFingerprint,
      rawText,
    };
    this.#records.push(record);
    this.changed();
    return record;
  }

  /** Notifies `waitFor` callers that a record changed; call after mutating a record. */
  changed(): void {
    for (const wake of this.#waiters) wake();
  }

  /** Records whose raw body contains `contains` (all when omitted), in arrival order. */
  list(contains?: string): RecordedRequest[] {
    if (contains === undefined || contains === "") return [...this.#records];
    return this.#records.filter((r) => r.rawText.includes(contains));
  }

  /** Forgets all records (sequence numbers keep increasing). */
  clear(): void {
    this.#records.length = 0;
  }

  /**
   * Resolves with the first record matching `predicate` once one exists (checked on every
   * change); rejects with an Error after `timeoutMs` (default 5000 ms).
   */
  waitFor(predicate: (r: RecordedRequest) => boolean, timeoutMs = 5000): Promise<RecordedRequest> {
    return new Promise((resolve, reject) => {
      const check = (): boolean => {
        const hit = this.#records.find(predicate);
        if (!hit) return false;
        cleanup();
        resolve(hit);
        return true;
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(new Error(`[simulator] recorder.waitFor timed out after ${timeoutMs} ms`));
      }, timeoutMs);
      const cleanup = (): void => {
        clearTimeout(timer);
        this.#waiters.delete(wake);
      };
      const wake = (): void => {
        check();
      };
      if (!check()) this.#waiters.add(wake);
    });
  }
}

/** JSON form of `record` for `/_sim/requests` (drops `rawText`). */
export function recordToJson(record: RecordedRequest): RecordedRequestJson {
  const { rawText: _raw, ...rest } = record;
  return rest;
}

/**
 * The fingerprint of the bearer token in an `Authorization` header: the first 16 hex digits of
 * its SHA-256, or null when the header carries none.
 */
export function keyFingerprint(authorization: string | undefined): string | null {
  const key = /^Bearer\s+(\S+)/i.exec(authorization ?? "")?.[1];
  return key ? createHash("sha256").update(key).digest("hex").slice(0, 16) : null;
}
