/**
 * Compaction and token counting end to end (issue #17 items 3 and 4) with the real `openai` SDK
 * against the local stack `npm start` runs (`wrangler dev` + the reference simulator as a Responses
 * upstream Deltagate compacts for): `responses.compact()`, the compacted window continued over
 * `ResponsesWS` and over HTTP, a `compaction_trigger` over `ResponsesWS`, and
 * `responses.inputTokens.count()`.
 */
import OpenAI from "openai";
import type { ResponseInputItem, ResponsesServerEvent } from "openai/resources/responses/responses";
import { ResponsesWS } from "openai/resources/responses/ws";
import { describe, expect, it } from "vitest";
import { LOCAL_DEV_KEY } from "../../scripts/local-stack.ts";
import { useSharedStack } from "../support/e2e-stack.ts";

const e2e = useSharedStack();
const MODEL = "deltagate-sim";

function client(): OpenAI {
  return new OpenAI({ apiKey: LOCAL_DEV_KEY, baseURL: e2e.stack.baseUrl, maxRetries: 0 });
}

/** Sends one create on `ws` and resolves with its terminal event; rejects on an `error` event. */
function turn(ws: ResponsesWS, create: Parameters<ResponsesWS["send"]>[0]): Promise<ResponsesServerEvent> {
  return new Promise((resolve, reject) => {
    const onEvent = (event: ResponsesServerEvent) => {
      if (event.type === "error") reject(new Error(JSON.stringify(event)));
      if (event.type === "response.completed" || event.type === "response.failed") {
        ws.off("event", onEvent);
        resolve(event);
      }
    };
    ws.on("event", onEvent);
    ws.send(create);
  });
}

describe("compaction with the openai SDK against wrangler dev", () => {
  it("responses.compact(), then the window continues over ResponsesWS and HTTP", async () => {
    const sdk = client();
    const compacted = await sdk.responses.compact({
      model: MODEL,
      input: [
        { role: "user", content: "Remember the compaction code word: slate." },
        { role: "assistant", content: "OK." },
        { role: "user", content: "Compress this conversation for later continuation." },
      ],
    });
    expect(compacted.object).toBe("response.compaction");
    const last = compacted.output[compacted.output.length - 1]!;
    expect(last.type).toBe("compaction");

    const window = compacted.output as unknown as ResponseInputItem[];
    const ws = new ResponsesWS(sdk);
    try {
      const done = await turn(ws, {
        type: "response.create",
        model: MODEL,
        store: false,
        tools: [],
        input: [...window, { role: "user", content: "Continue from here. [sim:tokens=4]" }],
      });
      expect(done.type).toBe("response.completed");
    } finally {
      ws.close();
    }
    const http = await sdk.responses.create({
      model: MODEL,
      input: [...window, { role: "user", content: "And over HTTP. [sim:tokens=4]" }],
    });
    expect(http.status).toBe("completed");

    const counted = await sdk.responses.inputTokens.count({
      model: MODEL,
      input: [...window, { role: "user", content: "How long is this?" }],
    });
    expect(counted.object).toBe("response.input_tokens");
    expect(counted.input_tokens).toBeGreaterThan(0);
  });

  it("a compaction_trigger over ResponsesWS answers one compaction item; the chain goes on", async () => {
    const sdk = client();
    const ws = new ResponsesWS(sdk);
    try {
      const first = await turn(ws, {
        type: "response.create",
        model: MODEL,
        input: "Code word: ember. [sim:tokens=5]",
      });
      const firstId = (first as { response: { id: string } }).response.id;
      const compaction = await turn(ws, {
        type: "response.create",
        model: MODEL,
        previous_response_id: firstId,
        input: [{ type: "compaction_trigger" }],
      });
      const response = (
        compaction as {
          response: { id: string; output: Array<{ type: string; encrypted_content?: string }> };
        }
      ).response;
      expect(response.output.map((item) => item.type)).toEqual(["compaction"]);
      expect(response.output[0]!.encrypted_content?.length).toBeGreaterThan(0);
      const next = await turn(ws, {
        type: "response.create",
        model: MODEL,
        previous_response_id: response.id,
        input: "Go on. [sim:tokens=4]",
      });
      expect(next.type).toBe("response.completed");
      const items = await sdk.responses.inputItems.list(response.id);
      expect(items.data.map((item) => item.type)).not.toContain("compaction_trigger");
    } finally {
      ws.close();
    }
  });
});
