/**
 * src/upstream/chat/messages.ts: the Chat Completions translation applies OpenAI's defaults the
 * client left out (an image part's `detail: "auto"`).
 */
import { describe, expect, it } from "vitest";
import { toChatContent } from "../../../../src/upstream/chat/messages.ts";

describe("toChatContent", () => {
  it("sends an image without detail with OpenAI's default detail auto, and keeps a given one", () => {
    expect(
      toChatContent([
        { type: "input_image", image_url: "https://example.test/a.png" },
        { type: "input_image", image_url: "https://example.test/b.png", detail: "low" },
      ]),
    ).toEqual([
      { type: "image_url", image_url: { url: "https://example.test/a.png", detail: "auto" } },
      { type: "image_url", image_url: { url: "https://example.test/b.png", detail: "low" } },
    ]);
  });
});
