/**
 * Shared state of one running simulator instance: resolved options (timing, logging), the
 * stored-response map, the HTTP prefix caches, the request recorder, the issued reasoning items
 * and whether validation is strict. Passed to every
 * endpoint handler.
 */

import type { PromptCache } from "./anthropic/prompt-cache.ts";
import type { ThinkingSigner } from "./anthropic/signatures.ts";
import type { ImplicitCache } from "./gemini/implicit-cache.ts";
import type { ThoughtSigner } from "./gemini/signatures.ts";
import type { Holds } from "./holds.ts";
import type { ModerationSettings } from "./moderations.ts";
import type { KeyedPrefixCache } from "./prefix-cache.ts";
import type { ReasoningLedger } from "./reasoning.ts";
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
  /**
   * Validate requests like the strictest known upstream (simulator/README.md, "Strict
   * validation"); false keeps only OpenAI's call_id pairing. Default true.
   */
  strict: boolean;
  /** Reasoning items issued (directive `reasoning=1`), for the replay rules (reasoning.ts). */
  reasoning: ReasoningLedger;
  /** Named holds of the `hold=` directive (`POST /_sim/release`). */
  holds: Holds;
  /** Secret of this instance's compaction items (compaction.ts): another simulator's are refused. */
  compactionSecret: Buffer;
  /** Anthropic `/v1/messages` (simulator/anthropic/): its prompt cache and thinking signatures. */
  anthropic: { cache: PromptCache; signer: ThinkingSigner };
  /** Gemini `generateContent` (simulator/gemini/): its implicit cache and thought signatures. */
  gemini: { cache: ImplicitCache; signer: ThoughtSigner };
  /** Writes one log line (already prefixed with "[simulator]"), or nothing when quiet. */
  log: (line: string) => void;
}
