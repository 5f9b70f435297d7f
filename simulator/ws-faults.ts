/**
 * Seeded, deterministic loss of WebSocket-mode upstream state (`ws_drop_pct` / `ws_drop_seed`
 * directives): which `response.create` frames the simulator answers by dropping the socket, by
 * `previous_response_not_found`, or by dropping the socket right after the response. The choice
 * is a hash of (seed, context size in items), i.e. of the conversation turn, so a test's faults
 * do not depend on timing, on other tests sharing the simulator, or on how many sockets the
 * client opened. Invariant: the first create of a connection is never faulted, so a client that
 * recovers by resending the full context on a fresh socket always gets through.
 */

/** The fault injected into one create frame. */
export type WsLoss =
  /** Terminate the socket (no close frame → 1006) before answering. */
  | "drop_before"
  /** Answer the request-level `previous_response_not_found` error, as if the cache lost the parent. */
  | "not_found"
  /** Answer normally, then terminate the socket. */
  | "drop_after";

/** Inputs of the decision. */
export interface WsLossInput {
  seed: number;
  /** Percentage (0–100) of eligible create frames that get a fault. */
  pct: number;
  /** Items in the request's effective context (history + input). */
  contextItems: number;
  /** 1-based number of this create frame on its connection. */
  ordinal: number;
  /** True when the frame has a `previous_response_id` (only then can `not_found` apply). */
  continuation: boolean;
}

/** The fault for one create frame, or null. */
export function wsLossFor(input: WsLossInput): WsLoss | null {
  if (input.pct <= 0 || input.ordinal <= 1) return null;
  const u = unitHash(input.seed, input.contextItems);
  const p = input.pct / 100;
  if (u >= p) return null;
  const third = (u / p) * 3;
  if (third < 1) return "drop_before";
  // A full-context request has no parent to lose: the resend after a `not_found` goes through.
  if (third < 2) return input.continuation ? "not_found" : null;
  return "drop_after";
}

/** A uniform-looking number in [0, 1) from (seed, n): 32-bit integer mixing (murmur3 finalizer). */
function unitHash(seed: number, n: number): number {
  let h = (seed ^ Math.imul(n + 1, 0x9e3779b1)) >>> 0;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b) >>> 0;
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35) >>> 0;
  h = (h ^ (h >>> 16)) >>> 0;
  return h / 2 ** 32;
}
