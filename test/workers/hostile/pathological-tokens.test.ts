/**
 * Hostile suite, token counting (issue #10 item 2): 1 MiB of text without spaces or punctuation
 * (one repeated character, base64 of zeros, unbroken CJK) once took a BPE tokenizer tens of
 * seconds to minutes, freezing every session of the isolate. Sent to a route whose context window
 * forces counting, each is answered (here `context_length_exceeded`: it cannot fit) while another
 * session's turn completes beside it; before bounded counting (src/context/bounded-count.ts) the
 * first of these alone outlasted the test's timeout.
 */
import { describe, expect, it } from "vitest";
import { sdkClient as sdk } from "../../support/sdk-client.ts";
import { uniqueSession } from "../../support/ws-client.ts";

const MiB = 1024 * 1024;
const SHAPES: Array<[string, string]> = [
  ["one repeated character", "a".repeat(MiB)],
  ["base64 of a zero-filled file", `${"A".repeat(MiB - 4)}AA==`],
  ["unbroken CJK", "漢".repeat(MiB / 3)],
];

describe("hostile: pathological text for the tokenizer", () => {
  it.each(SHAPES)(
    "answers 1 MiB of %s in bounded time while another session keeps answering",
    async (_what, text) => {
      const client = sdk();
      const other = sdk(undefined, { "session-id": uniqueSession("tokens-other") });
      const pathological = client.responses
        .create({ model: "sim-small", input: text, truncation: "auto" })
        .then(
          () => "completed",
          (error: { status?: number; code?: string }) => `${error.status} ${error.code}`,
        );
      const beside = other.responses.create({ model: "deltagate-sim", input: "still there? [sim:tokens=3]" });
      expect((await beside).status).toBe("completed");
      expect(await pathological).toBe("400 context_length_exceeded");
    },
  );
});
