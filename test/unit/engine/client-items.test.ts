/**
 * src/engine/response-object.ts `clientItem` and src/engine/rekey.ts: what a client sees of stored
 * reasoning items (encrypted content only when its request asked, never the origin mark), and the
 * upstream ids kept on a reasoning item and the item right after it.
 */
import { describe, expect, it } from "vitest";
import { OutputRekeyer } from "../../../src/engine/rekey.ts";
import { clientEventFields, clientItem, listedItems } from "../../../src/engine/response-object.ts";
import type { StoredItem } from "../../../src/protocol/items.ts";
import { ENCRYPTED_REASONING, ORIGIN_FIELD } from "../../../src/upstream/encrypted-reasoning.ts";
import { isMintedItemId } from "../../../src/util/ids.ts";

const stored = {
  type: "reasoning",
  id: "rs_1",
  summary: [],
  encrypted_content: "gAAAA",
  [ORIGIN_FIELD]: "https://api.example.com/v1",
} as StoredItem;

describe("clientItem", () => {
  it("hides encrypted content unless the request's include asked for it, and always the origin mark", () => {
    expect(clientItem(stored, undefined)).toStrictEqual({ type: "reasoning", id: "rs_1", summary: [] });
    expect(clientItem(stored, ["message.output_text.logprobs"])).not.toHaveProperty("encrypted_content");
    expect(clientItem(stored, [ENCRYPTED_REASONING])).toStrictEqual({
      type: "reasoning",
      id: "rs_1",
      summary: [],
      encrypted_content: "gAAAA",
    });
    expect(stored).toHaveProperty(ORIGIN_FIELD); // the stored item is untouched
  });

  it("returns other items, and reasoning with nothing to hide, as they are", () => {
    const message = { type: "message", id: "msg_1", role: "user", content: "hi" } as StoredItem;
    expect(clientItem(message, undefined)).toBe(message);
    const plain = { type: "reasoning", id: "rs_2", summary: [] } as StoredItem;
    expect(clientItem(plain, undefined)).toBe(plain);
    const fields = { output_index: 0, item: stored };
    expect(clientEventFields(fields, undefined).item).toStrictEqual({
      type: "reasoning",
      id: "rs_1",
      summary: [],
    });
    expect(clientEventFields({ delta: "x" }, undefined)).toEqual({ delta: "x" });
  });
});

describe("OutputRekeyer", () => {
  it("keeps the upstream's id on a reasoning item and on the item right after it, and mints the others", () => {
    const rekey = new OutputRekeyer();
    expect(rekey.item({ type: "reasoning", id: "rs_up" }, 0).id).toBe("rs_up");
    expect(rekey.item({ type: "function_call", id: "fc_up1", call_id: "c1" }, 1).id).toBe("fc_up1");
    const second = rekey.item({ type: "function_call", id: "fc_up2", call_id: "c2" }, 2).id;
    expect(isMintedItemId(second)).toBe(true);
    // Deltas and the terminal output map to the same ids.
    expect(
      rekey.event({ type: "response.function_call_arguments.delta", item_id: "fc_up2", output_index: 2 }),
    ).toMatchObject({ item_id: second });
    expect(rekey.item({ type: "function_call", id: "fc_up1" }, 1).id).toBe("fc_up1");
  });

  it("mints the id of an item after anything but reasoning", () => {
    const rekey = new OutputRekeyer();
    rekey.item({ type: "message", id: "msg_up0" }, 0);
    expect(isMintedItemId(rekey.item({ type: "message", id: "msg_up1" }, 1).id)).toBe(true);
  });
});

describe("listedItems", () => {
  it("gives calls, tool outputs and assistant messages sent without status OpenAI's listed `completed`", () => {
    const items = [
      { type: "message", id: "msg_1", role: "user", content: [{ type: "input_text", text: "hi" }] },
      { type: "message", id: "msg_2", role: "assistant", content: [{ type: "output_text", text: "yo" }] },
      { type: "function_call", id: "fc_1", call_id: "c1", name: "f", arguments: "{}" },
      { type: "function_call_output", id: "fco_1", call_id: "c1", output: "ok" },
      { type: "custom_tool_call_output", id: "ctco_1", call_id: "c2", output: "ok" },
      { type: "function_call_output", id: "fco_2", call_id: "c3", output: "ok", status: "incomplete" },
    ] as StoredItem[];
    expect(listedItems(items, undefined).map((item) => (item as { status?: string }).status)).toEqual([
      undefined,
      "completed",
      "completed",
      "completed",
      "completed",
      "incomplete",
    ]);
  });
});
