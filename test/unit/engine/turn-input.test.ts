/**
 * src/engine/turn-input.ts: a client's items get minted ids when they have none (recognizable as
 * Deltagate's, so they never go upstream), and never carry Deltagate's origin mark.
 */
import { describe, expect, it } from "vitest";
import { inputItems } from "../../../src/engine/turn-input.ts";
import type { CreateRequest } from "../../../src/protocol/create-request.ts";
import { ORIGIN_FIELD } from "../../../src/upstream/encrypted-reasoning.ts";
import { isMintedItemId } from "../../../src/util/ids.ts";

describe("inputItems", () => {
  it("mints ids only where the client sent none, and drops an origin mark the client sent", () => {
    const request = {
      model: "m",
      input: [
        { type: "reasoning", summary: [], encrypted_content: "gAAAA", [ORIGIN_FIELD]: "https://x/v1" },
        { type: "message", id: "msg_client", role: "assistant", content: [] },
      ],
    } as unknown as CreateRequest;
    const [reasoning, message] = inputItems(request);
    expect(isMintedItemId(reasoning?.id ?? "")).toBe(true);
    expect(reasoning).not.toHaveProperty(ORIGIN_FIELD);
    expect(reasoning).toMatchObject({ type: "reasoning", encrypted_content: "gAAAA" });
    expect(message?.id).toBe("msg_client");
  });
});
