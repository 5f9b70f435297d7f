/**
 * What an upstream `error` frame received before a response started means (error events: https://developers.openai.com/api/docs/guides/websocket-mode): either
 * the upstream lost the state Deltagate relied on — recovered by resending the full context, the
 * client never sees it — or a real failure, mapped to an `UpstreamError` with the HTTP-adapter
 * conventions (`upstreamErrorForStatus`). Owns the list of state-loss codes.
 */
import { isRecord } from "../../protocol/json.ts";
import { upstreamErrorForStatus } from "../error-mapping.ts";
import type { UpstreamError, UpstreamEvent } from "../upstream.ts";

/** The verdict on a pre-response error frame. */
export type ErrorFrameVerdict =
  /** Upstream state lost: resend the full context; `freshSocket` when this socket is unusable. */
  | { kind: "resend"; freshSocket: boolean }
  /** A failure to report to the client. */
  | { kind: "fail"; error: UpstreamError };

/** The parent is not in the upstream's connection cache (evicted, other socket, restart). */
const PREVIOUS_NOT_FOUND = "previous_response_not_found";
/** The 60-minute connection lifetime was reached; the socket must be replaced (WebSocket mode guide). */
const CONNECTION_LIMIT = "websocket_connection_limit_reached";

/** Classifies an `error` frame that arrived before the response's first output event. */
export function classifyErrorFrame(event: UpstreamEvent): ErrorFrameVerdict {
  const nested = asRecord(event.error);
  const code = stringOr(nested?.code, stringOr(event.code, null));
  if (code === PREVIOUS_NOT_FOUND) return { kind: "resend", freshSocket: false };
  if (code === CONNECTION_LIMIT) return { kind: "resend", freshSocket: true };
  const rawMessage = stringOr(nested?.message, stringOr(event.message, null));
  const status = typeof event.status === "number" ? event.status : 500; // flat streaming error shape
  const message = rawMessage ?? `The upstream reported an error (${status}).`;
  const param = stringOr(nested?.param, null);
  return { kind: "fail", error: upstreamErrorForStatus(status, code, message, null, param) };
}

function asRecord(value: unknown): Record<string, unknown> | null {
  return isRecord(value) ? value : null;
}

function stringOr<T extends string | null>(value: unknown, fallback: T): string | T {
  return typeof value === "string" ? value : fallback;
}
