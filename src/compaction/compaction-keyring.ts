/**
 * Opening the compaction items of a context for one tenant, and what an upstream is sent in their
 * place. Owns the refusal of a compaction item Deltagate cannot use: a Deltagate token that does
 * not open (changed, another tenant's, a rotated-out key) and, on a route where Deltagate compacts,
 * an item another issuer made (it cannot be read there) — both 400 `invalid_encrypted_content`
 * before anything is stored or sent, as OpenAI refuses encrypted content it did not issue.
 * Source: https://github.com/openai/codex/issues/8119 (`invalid_encrypted_content`).
 */
import { ApiError } from "../protocol/errors.ts";
import type { StoredItem } from "../protocol/items.ts";
import type { ExtensionMode } from "../upstream/routes.ts";
import { compactionContent, expandedSummary, isCompaction } from "./compaction-items.ts";
import {
  type CompactionKeys,
  type CompactionPayload,
  CompactionTokenError,
  isDeltagateToken,
  openToken,
} from "./compaction-token.ts";

/** The opened Deltagate compaction items of a context, by token. */
export type OpenedCompactions = ReadonlyMap<string, CompactionPayload>;

function refused(param: string, message: string): ApiError {
  return new ApiError(400, {
    type: "invalid_request_error",
    code: "invalid_encrypted_content",
    message,
    param,
  });
}

/**
 * Opens every Deltagate compaction item of `items`.
 * @param inputStart index in `items` of the request's first input item (errors name `input[i]`
 *   for those, `previous_response_id` for the history's).
 * @param mode who compacts on the turn's route: on a `deltagate` route, a compaction item of
 *   another issuer is refused too.
 * @throws {ApiError} 400 `invalid_encrypted_content`.
 */
export async function openCompactions(
  items: readonly StoredItem[],
  inputStart: number,
  tenant: string,
  keys: CompactionKeys,
  mode: ExtensionMode,
): Promise<OpenedCompactions> {
  const opened = new Map<string, CompactionPayload>();
  for (let index = 0; index < items.length; index++) {
    const item = items[index];
    if (!item || !isCompaction(item)) continue;
    const param = index >= inputStart ? `input[${index - inputStart}]` : "previous_response_id";
    const content = compactionContent(item);
    if (content === null) throw refused(param, "A compaction item needs its encrypted_content.");
    if (!isDeltagateToken(content)) {
      if (mode === "upstream") continue; // the upstream that issued it reads it
      throw refused(
        param,
        "This compaction item was not issued by this Deltagate, and the model's route cannot read it (Deltagate compacts for this route).",
      );
    }
    if (opened.has(content)) continue;
    try {
      opened.set(content, await openToken(content, tenant, keys));
    } catch (cause) {
      if (!(cause instanceof CompactionTokenError)) throw cause;
      throw refused(
        param,
        "The encrypted content of this compaction item could not be verified: it was not issued by this Deltagate for this API key's tenant, or it was changed.",
      );
    }
  }
  return opened;
}

/** `items` with each Deltagate compaction item replaced by its summary as a message (same length). */
export function expandCompactions(items: readonly StoredItem[], opened: OpenedCompactions): StoredItem[] {
  if (opened.size === 0) return items as StoredItem[];
  return items.map((item) => {
    if (!isCompaction(item)) return item;
    const payload = opened.get(compactionContent(item) ?? "");
    return payload ? expandedSummary(item.id, payload.summary) : item;
  });
}
