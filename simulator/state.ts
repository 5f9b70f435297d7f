/**
 * Shared state of one running simulator instance: resolved options (timing, logging), the
 * stored-response map, the HTTP prefix caches and the request recorder. Passed to every
 * endpoint handler.
 */
import type { ModerationSettings } from "./moderations.ts";
import type { KeyedPrefixCache } from "./prefix-cache.ts";
import type { Recorder } from "./recorder.ts";
import type { ResponseStore } from "./store.ts";
import type { TimingModel } from "./timing.ts";
import type { WsConnectionLog } from "./ws-connections.ts";

/** Everything the endpoint handlers share. */
export interface SimState {
  timing: TimingModel;
  /** Responses created with `store` not false (HTTP and WS). */
  store: ResponseStore;
  /** Prefix caches by `prompt_cache_key` for requests that resend full context. */
  prefix: KeyedPrefixCache;
  recorder: Recorder;
  /** WebSocket-mode connections (`/_sim/ws-connections`). */
  wsConnections: WsConnectionLog;
  /** Responses each WS connection keeps in its local cache. */
  wsCacheSize: number;
  /** Latency and flag words of `/v1/moderations`. */
  moderation: ModerationSettings;
  /** Writes one log line (already prefixed with "[simulator]"), or nothing when quiet. */
  log: (line: string) => void;
}
