/**
 * The reference simulator's compaction and token counting against the real openai-node client:
 * `responses.compact()` (user messages then one compaction item; 400 without `model`), its
 * compaction item accepted back as input while another simulator's or a changed one is refused
 * (400 `invalid_encrypted_content`), `compaction_trigger` (exactly one compaction output item, the
 * trigger not kept), and `responses.inputTokens.count()` equal to a turn's `usage.input_tokens`.
 */
import OpenAI from "openai";
import type { ResponseInputItem } from "openai/resources/responses/responses";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningSimulator, startSimulator } from "../../simulator/server.ts";

let sim: RunningSimulator;
let other: RunningSimulator;
let client: OpenAI;

beforeAll(async () => {
  sim = await startSimulator({ port: 0, quiet: true, decodeTokensPerSecond: 20_000 });
  other = await startSimulator({ port: 0, quiet: true });
  client = new OpenAI({ apiKey: "sim-key", baseURL: `${sim.url}/v1`, maxRetries: 0 });
});
afterAll(async () => {
  await sim.close();
  await other.close();
});

describe("simulator compaction", () => {
  it("compacts: user messages, then one compaction item, accepted back as input", async () => {
    const compacted = await client.responses.compact({
      model: "deltagate-sim",
      input: [
        { role: "user", content: "Remember the code word: slate." },
        { role: "assistant", content: "OK." },
      ],
    });
    expect(compacted.object).toBe("response.compaction");
    expect(compacted.output.map((item) => item.type)).toEqual(["message", "compaction"]);
    expect(compacted.usage.total_tokens).toBeGreaterThan(0);
    const next = await client.responses.create({
      model: "deltagate-sim",
      input: [...(compacted.output as unknown as ResponseInputItem[]), { role: "user", content: "Go on." }],
    });
    expect(next.status).toBe("completed");
  });

  it("answers 400 without a model", async () => {
    const res = await fetch(`${sim.url}/v1/responses/compact`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ input: "Compact this conversation." }),
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { param: string } }).error.param).toBe("model");
  });

  it("refuses another simulator's compaction item and a changed one", async () => {
    const otherClient = new OpenAI({ apiKey: "k", baseURL: `${other.url}/v1`, maxRetries: 0 });
    const foreign = await otherClient.responses.compact({ model: "deltagate-sim", input: "Seal." });
    const item = foreign.output[foreign.output.length - 1] as unknown as ResponseInputItem;
    await expect(
      client.responses.create({ model: "deltagate-sim", input: [item, { role: "user", content: "hi" }] }),
    ).rejects.toMatchObject({ status: 400, code: "invalid_encrypted_content" });
    const own = await client.responses.compact({ model: "deltagate-sim", input: "Seal." });
    const sealed = own.output[own.output.length - 1] as { encrypted_content: string };
    const changed = { type: "compaction" as const, encrypted_content: `${sealed.encrypted_content}x` };
    await expect(
      client.responses.create({ model: "deltagate-sim", input: [changed, { role: "user", content: "hi" }] }),
    ).rejects.toMatchObject({ status: 400, code: "invalid_encrypted_content" });
  });

  it("answers a compaction_trigger with exactly one compaction item", async () => {
    const response = await client.responses.create({
      model: "deltagate-sim",
      input: [{ role: "user", content: "Compact me." }, { type: "compaction_trigger" }],
    });
    expect(response.output.map((item) => item.type)).toEqual(["compaction"]);
    expect((response.output[0] as { encrypted_content: string }).encrypted_content.length).toBeGreaterThan(0);
  });

  it("counts input tokens exactly as a turn reports them", async () => {
    const input = "Count these tokens please [sim:tokens=3]";
    const instructions = "Be brief.";
    const counted = await client.responses.inputTokens.count({ model: "deltagate-sim", input, instructions });
    expect(counted.object).toBe("response.input_tokens");
    const turn = await client.responses.create({ model: "deltagate-sim", input, instructions });
    expect(counted.input_tokens).toBe(turn.usage?.input_tokens);
  });
});
