/**
 * Re-keys upstream output to Deltagate's own ids. Owns the upstream-id → Deltagate-id map of one
 * response. Invariants: the same upstream item always maps to the same Deltagate id, so
 * `output_item.added`, every delta's `item_id` and `output_item.done` agree (the openai SDK's
 * accumulator checks this: https://github.com/openai/openai-node, src/lib/responses/ResponseStream.ts); `call_id`s are kept (the client answers with them), and
 * two ids are the upstream's own: a reasoning item's (the upstream binds its encrypted content to
 * it) and that of the item right after a reasoning item (an upstream that resolves the reasoning
 * by id requires that item with the id it issued: https://github.com/mastra-ai/mastra/issues/11103),
 * so both can be sent back (src/upstream/item-conversion.ts).
 */
import type { StoredItem } from "../protocol/items.ts";
import { isRecord } from "../protocol/json.ts";
import { newItemId } from "../util/ids.ts";

type JsonObject = Record<string, unknown>;

/** Id map for one response's output. */
export class OutputRekeyer {
  private readonly byUpstreamId = new Map<string, string>();
  private readonly byIndex = new Map<number, string>();
  private readonly typeByIndex = new Map<number, string>();

  /** Deltagate's id for the item at `outputIndex` whose upstream id is `upstreamId`. */
  idFor(type: string, upstreamId: string | undefined, outputIndex: number | undefined): string {
    if (upstreamId && this.byUpstreamId.has(upstreamId)) return this.byUpstreamId.get(upstreamId)!;
    if (upstreamId === undefined && outputIndex !== undefined && this.byIndex.has(outputIndex)) {
      return this.byIndex.get(outputIndex)!;
    }
    const afterReasoning = outputIndex !== undefined && this.typeByIndex.get(outputIndex - 1) === "reasoning";
    const id = upstreamId && (type === "reasoning" || afterReasoning) ? upstreamId : newItemId(type);
    if (upstreamId) this.byUpstreamId.set(upstreamId, id);
    if (outputIndex !== undefined) {
      this.byIndex.set(outputIndex, id);
      this.typeByIndex.set(outputIndex, type);
    }
    return id;
  }

  /** A copy of an upstream output item carrying Deltagate's id. */
  item(raw: unknown, outputIndex: number | undefined): StoredItem {
    const item: JsonObject = isRecord(raw) ? { ...raw } : {};
    const type = typeof item.type === "string" ? item.type : "message";
    item.type = type;
    item.id = this.idFor(type, typeof item.id === "string" ? item.id : undefined, outputIndex);
    return item as StoredItem;
  }

  /**
   * A copy of an upstream output event with `item.id` and `item_id` rewritten.
   * Lifecycle fields (`type`, `sequence_number`, `response`) are left to the caller.
   */
  event<T extends JsonObject>(raw: T): T {
    const event: JsonObject = { ...raw };
    const outputIndex = typeof event.output_index === "number" ? event.output_index : undefined;
    if ("item" in event) event.item = this.item(event.item, outputIndex);
    if (typeof event.item_id === "string") {
      event.item_id =
        this.byUpstreamId.get(event.item_id) ?? this.idFor("message", event.item_id, outputIndex);
    }
    return event as T;
  }
}
