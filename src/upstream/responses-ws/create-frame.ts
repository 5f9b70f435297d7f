/**
 * The `response.create` frame Deltagate sends to a WebSocket-mode upstream
 * (https://developers.openai.com/api/docs/guides/websocket-mode): the turn's settings, `store:false` (the upstream's connection-local cache holds
 * the chain), and either the delta on top of the upstream's own previous response id, or the full
 * context with no previous id. Owns that choice's wire form.
 * Invariant: items go as item-conversion.ts sends them (no Deltagate ids, reasoning only where
 * the upstream can use it), a frame carries `previous_response_id` only together with the delta,
 * and tool outputs sit in their call's tool group (src/protocol/tool-calls.ts).
 */

import type { Json } from "../../protocol/json.ts";
import { adjacentToolOutputs } from "../../protocol/tool-calls.ts";
import { upstreamInclude } from "../encrypted-reasoning.ts";
import { toUpstreamItems } from "../item-conversion.ts";
import type { UpstreamRequest } from "../upstream.ts";

/** What one frame asks the upstream for. */
export interface FramePlan {
  /** The upstream's id of the parent on this socket: send the delta on top of it; null = full context. */
  parentUpstreamId: string | null;
  /** False for a `generate:false` warm-up (instructions and tools pre-loaded, no output). */
  generate: boolean;
  /** Add `reasoning.encrypted_content` to the client's `include` (encrypted-reasoning.ts). */
  addInclude: boolean;
  /** The upstream's base URL (reasoning issued elsewhere is not sent: item-conversion.ts). */
  origin: string;
}

/**
 * Builds the frame for `request`.
 * `prompt_cache_key` defaults to the session key so the upstream's prefix cache stays hot
 * (issue #4 §3) even when a recovery resends the full context.
 */
export function createFrame(request: UpstreamRequest, plan: FramePlan): Record<string, Json> {
  const items = adjacentToolOutputs(plan.parentUpstreamId === null ? request.input : request.newInput);
  const include = upstreamInclude(request.settings.include ?? undefined, plan.addInclude);
  const frame: Record<string, Json> = {
    type: "response.create",
    ...(request.settings as Record<string, Json>),
    ...(include ? { include } : {}),
    model: request.model,
    store: false,
    prompt_cache_key: request.settings.prompt_cache_key ?? request.sessionKey,
    input: [
      ...(toUpstreamItems(items, { origin: plan.origin, resolvesIds: false }) as unknown as Json[]),
      ...(request.compactionTrigger ? [{ type: "compaction_trigger" }] : []),
    ],
  };
  if (plan.parentUpstreamId !== null) frame.previous_response_id = plan.parentUpstreamId;
  if (!plan.generate) frame.generate = false;
  return frame;
}
