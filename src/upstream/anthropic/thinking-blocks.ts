/**
 * Claude's thinking blocks inside Responses `reasoning` items. Claude returns `thinking` blocks
 * (text and an opaque `signature`) and `redacted_thinking` blocks (opaque `data`); in a tool loop
 * the previous assistant turn's blocks must be sent back unmodified, or Claude refuses the request.
 * A Responses client has only `reasoning` items to carry them, so each run of consecutive blocks
 * becomes one reasoning item (a reasoning item must be followed by the model item it belongs to)
 * whose `encrypted_content` is the blocks themselves, JSON in base64url behind a version prefix:
 * opaque to the client, byte-exact on the way back (JSON of strings round-trips exactly). The
 * session stores the item with its content (src/store/), so a chained turn sends it back, and a
 * client that resends the item without `encrypted_content` gets it restored by id
 * (src/resend/reasoning-restore.ts).
 * Invariant: `openThinking(sealThinking(blocks))` deep-equals `blocks`; anything else opens to null
 * (another provider's encrypted reasoning is not Claude's and is left out).
 * Source: https://docs.anthropic.com/en/docs/build-with-claude/extended-thinking (preserving
 * thinking blocks, `signature`, `redacted_thinking`).
 */
import { isRecord } from "../../protocol/json.ts";
import { openEnvelope, wrapEnvelope } from "../provider-envelope.ts";

/** A thinking block as Claude sent it. */
export type ThinkingBlock =
  | { type: "thinking"; thinking: string; signature: string }
  | { type: "redacted_thinking"; data: string };

/** Prefix of `encrypted_content` that holds Claude thinking blocks. */
export const THINKING_PREFIX = "claude-thinking.v1.";

function fieldsOf(block: ThinkingBlock): ThinkingBlock {
  return block.type === "thinking"
    ? { type: block.type, thinking: block.thinking, signature: block.signature }
    : { type: block.type, data: block.data };
}

/** The `encrypted_content` carrying a run of consecutive thinking blocks. */
export function sealThinking(blocks: readonly ThinkingBlock[]): string {
  return wrapEnvelope(THINKING_PREFIX, blocks.map(fieldsOf));
}

function blockOf(value: unknown): ThinkingBlock | null {
  if (!isRecord(value)) return null;
  if (
    value.type === "thinking" &&
    typeof value.thinking === "string" &&
    typeof value.signature === "string"
  ) {
    return { type: "thinking", thinking: value.thinking, signature: value.signature };
  }
  if (value.type === "redacted_thinking" && typeof value.data === "string") {
    return { type: "redacted_thinking", data: value.data };
  }
  return null;
}

/** The blocks an `encrypted_content` carries, or null when it is not ours. */
export function openThinking(content: unknown): ThinkingBlock[] | null {
  const value = openEnvelope(THINKING_PREFIX, content);
  if (!Array.isArray(value) || value.length === 0) return null;
  const blocks = value.map(blockOf);
  return blocks.every((block) => block !== null) ? (blocks as ThinkingBlock[]) : null;
}
