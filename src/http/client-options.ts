/**
 * Protocol extensions a client opts into per connection (WebSocket upgrade: a header or a query
 * parameter) or per request (`POST /v1/responses`: the header). Owns their names, syntax and
 * bounds; what they change lives elsewhere (src/session/scope.ts, src/engine/turn-emitter.ts).
 * - `x-deltagate-store-false-grace: <ms>` / `?store_false_grace_ms=<ms>` (upgrade only): how long
 *   this socket's store:false state stays continuable by another socket of the same tenant after
 *   it closes. Capped by `STORE_FALSE_GRACE_MAX_MS`; without it, `STORE_FALSE_GRACE_MS` (default 0:
 *   OpenAI's connection-local store:false, https://developers.openai.com/api/docs/guides/websocket-mode).
 * - `x-deltagate-keepalive: 0` / `?keepalive=0`: no `keepalive` events in this client's responses
 *   (strict stream validators reject the event OpenAI sends on long streams).
 * Invariant: a malformed value is a 400 naming the header, never silently ignored; a grace above
 * the cap is lowered to the cap (the upgrade answer's `x-deltagate-store-false-grace` header says
 * what the socket got).
 */
import { type ApiError, invalidRequest } from "../protocol/errors.ts";

/** The store:false grace window opt-in header (also the upgrade answer's header). */
export const STORE_FALSE_GRACE_HEADER = "x-deltagate-store-false-grace";
/** Its query parameter on the upgrade. */
export const STORE_FALSE_GRACE_QUERY = "store_false_grace_ms";
/** The keepalive opt-out header. */
export const KEEPALIVE_HEADER = "x-deltagate-keepalive";
/** Its query parameter on the upgrade. */
export const KEEPALIVE_QUERY = "keepalive";

/** What a client asked for. */
export interface ClientOptions {
  /** The socket's store:false grace window, in ms (0: connection-local). */
  storeFalseGraceMs: number;
  /** False when the client turned keepalive events off. */
  keepalive: boolean;
}

/** The operator's bounds (src/config/config.ts). */
export interface GraceBounds {
  /** `STORE_FALSE_GRACE_MS`: the window of a socket that does not ask. */
  defaultMs: number;
  /** `STORE_FALSE_GRACE_MAX_MS`: the longest window a socket may ask for. */
  maxMs: number;
}

const ON = new Set(["1", "true", "on", "yes"]);
const OFF = new Set(["0", "false", "off", "no"]);
/** Digits only: at most 10 (a window of ~115 days, far above any sensible cap). */
const MS_PATTERN = /^\d{1,10}$/;

/** The value of a header, else of the query parameter (upgrades only), trimmed; null when absent. */
function optionValue(
  headers: Headers,
  header: string,
  query: URLSearchParams | null,
  param: string,
): string | null {
  const raw = headers.get(header) ?? query?.get(param) ?? null;
  return raw === null ? null : raw.trim();
}

function badValue(header: string, value: string, expected: string): ApiError {
  return invalidRequest(
    `Invalid value for '${header}': expected ${expected}, got '${value.slice(0, 32)}'.`,
    header,
    "invalid_value",
  );
}

/**
 * Whether a client wants `keepalive` events (the default), from its headers, and for an upgrade
 * (`url` given) its query parameter.
 * @throws {ApiError} 400 `invalid_value` for a malformed value.
 */
export function keepaliveWanted(headers: Headers, url?: string): boolean {
  const query = url === undefined ? null : new URL(url).searchParams;
  const value = optionValue(headers, KEEPALIVE_HEADER, query, KEEPALIVE_QUERY);
  if (value === null || ON.has(value.toLowerCase())) return true;
  if (OFF.has(value.toLowerCase())) return false;
  throw badValue(KEEPALIVE_HEADER, value, "0 or 1");
}

/**
 * The options of a WebSocket upgrade (headers, then query parameters of `url`).
 * @throws {ApiError} 400 `invalid_value` for a malformed value.
 */
export function clientOptions(headers: Headers, bounds: GraceBounds, url: string): ClientOptions {
  const query = new URL(url).searchParams;
  const grace = optionValue(headers, STORE_FALSE_GRACE_HEADER, query, STORE_FALSE_GRACE_QUERY);
  let storeFalseGraceMs = bounds.defaultMs;
  if (grace !== null) {
    if (!MS_PATTERN.test(grace)) throw badValue(STORE_FALSE_GRACE_HEADER, grace, "a number of milliseconds");
    storeFalseGraceMs = Math.min(Number(grace), Math.max(bounds.maxMs, bounds.defaultMs));
  }
  return { storeFalseGraceMs, keepalive: keepaliveWanted(headers, url) };
}
