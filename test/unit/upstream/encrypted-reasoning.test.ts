/**
 * src/upstream/encrypted-reasoning.ts: the `include` sent upstream, the refusal memory, and the
 * origin mark on streamed reasoning items.
 */
import { describe, expect, it } from "vitest";
import {
  addsEncryptedInclude,
  ENCRYPTED_REASONING,
  isIncludeRefusal,
  markOrigin,
  markStreamOrigin,
  ORIGIN_FIELD,
  rememberRefusal,
  upstreamInclude,
} from "../../../src/upstream/encrypted-reasoning.ts";
import { UpstreamError, type UpstreamEvent } from "../../../src/upstream/upstream.ts";
import { testId } from "../../support/test-id.ts";

const BASE = "https://api.example.com/v1";

describe("the include sent upstream", () => {
  it("adds encrypted reasoning to the client's include, keeping the client's values first", () => {
    expect(upstreamInclude(undefined, true)).toEqual([ENCRYPTED_REASONING]);
    expect(upstreamInclude(["message.output_text.logprobs"], true)).toEqual([
      "message.output_text.logprobs",
      ENCRYPTED_REASONING,
    ]);
    expect(upstreamInclude(["x"], false)).toBeNull();
  });

  it("is added to generating requests whose client did not ask, for models not known to refuse it", () => {
    const model = `m-${testId()}`;
    expect(addsEncryptedInclude(BASE, model, undefined, true)).toBe(true);
    expect(addsEncryptedInclude(BASE, model, undefined, false)).toBe(false); // warm-up
    expect(addsEncryptedInclude(BASE, model, [ENCRYPTED_REASONING], true)).toBe(false); // already asked
    rememberRefusal(BASE, model);
    expect(addsEncryptedInclude(BASE, model, undefined, true)).toBe(false);
    expect(addsEncryptedInclude("https://other/v1", model, undefined, true)).toBe(true);
  });

  it("recognizes the refusal by its param", () => {
    const refusal = new UpstreamError(
      400,
      "upstream_error",
      "Encrypted content is not supported with this model.",
    );
    expect(isIncludeRefusal(refusal)).toBe(false);
    const withParam = new UpstreamError(400, "upstream_error", "…", "invalid_request_error", null, "include");
    expect(isIncludeRefusal(withParam)).toBe(true);
    expect(
      isIncludeRefusal(new UpstreamError(500, "server_error", "…", "server_error", null, "include")),
    ).toBe(false);
  });
});

describe("origin marks", () => {
  const reasoning = { type: "reasoning", id: "rs_1", summary: [], encrypted_content: "gAAA" };
  const message = { type: "message", id: "msg_1", role: "assistant", content: [] };

  it("marks reasoning items of output events and terminal outputs, and nothing else", () => {
    const done: UpstreamEvent = { type: "response.output_item.done", output_index: 0, item: reasoning };
    expect(markOrigin(done, BASE).item).toEqual({ ...reasoning, [ORIGIN_FIELD]: BASE });
    expect(done.item).toEqual(reasoning); // not mutated
    const other: UpstreamEvent = { type: "response.output_item.done", output_index: 1, item: message };
    expect(markOrigin(other, BASE)).toBe(other);
    const completed: UpstreamEvent = {
      type: "response.completed",
      response: { id: "resp_1", output: [reasoning, message] },
    };
    expect(markOrigin(completed, BASE).response).toEqual({
      id: "resp_1",
      output: [{ ...reasoning, [ORIGIN_FIELD]: BASE }, message],
    });
  });

  it("marks the first event and the rest of a stream", async () => {
    const first: UpstreamEvent = { type: "response.output_item.added", output_index: 0, item: reasoning };
    async function* rest() {
      yield { type: "response.output_item.done", output_index: 0, item: reasoning } as UpstreamEvent;
    }
    const marked = markStreamOrigin({ first, rest: rest() }, BASE);
    expect(marked.first.item).toHaveProperty(ORIGIN_FIELD, BASE);
    for await (const event of marked.rest) expect(event.item).toHaveProperty(ORIGIN_FIELD, BASE);
  });
});
