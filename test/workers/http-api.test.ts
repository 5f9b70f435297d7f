/**
 * The HTTP Responses API (issue #3 §1, §4) through the real `openai` SDK in HTTP mode: create
 * (streaming and not), retrieve, delete, input items, cancel, and the SDK's error classes.
 */
import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { sdkClient } from "../support/sdk-client.ts";
import { uniqueSession } from "../support/ws-client.ts";

const MODEL = "deltagate-sim";

describe("HTTP Responses API", () => {
  it("creates, retrieves, lists input items and deletes a response", async () => {
    const client = sdkClient();
    const created = await client.responses.create({ model: MODEL, input: "hello over HTTP [sim:tokens=12]" });
    expect(created.status).toBe("completed");
    expect(created.id).toMatch(/^resp_/);
    expect(created.output_text.length).toBeGreaterThan(0);

    const retrieved = await client.responses.retrieve(created.id);
    expect(retrieved.id).toBe(created.id);
    expect(retrieved.output_text).toBe(created.output_text);

    const items = await client.responses.inputItems.list(created.id);
    expect(items.data).toHaveLength(1);
    expect(items.data[0]).toMatchObject({ type: "message", role: "user" });

    await client.responses.delete(created.id);
    await expect(client.responses.retrieve(created.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    await expect(client.responses.inputItems.list(created.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
  });

  it("pages input items with after, limit and order", async () => {
    const client = sdkClient();
    const input = Array.from({ length: 5 }, (_, i) => ({ role: "user" as const, content: `message ${i}` }));
    const created = await client.responses.create({ model: MODEL, input });
    const page1 = await client.responses.inputItems.list(created.id, { limit: 2, order: "asc" });
    expect(page1.data.map((item) => (item as { content: unknown }).content)).toEqual([
      "message 0",
      "message 1",
    ]);
    expect(page1.has_more).toBe(true);
    const page2 = await client.responses.inputItems.list(created.id, {
      limit: 2,
      order: "asc",
      after: page1.data[1]!.id!,
    });
    expect(page2.data.map((item) => (item as { content: unknown }).content)).toEqual([
      "message 2",
      "message 3",
    ]);
    const desc = await client.responses.inputItems.list(created.id, { limit: 1 });
    expect((desc.data[0] as { content: unknown }).content).toBe("message 4");
  });

  it("streams with the SDK's ResponseStream and its final response matches retrieve", async () => {
    const client = sdkClient();
    const stream = client.responses.stream({ model: MODEL, input: "stream please [sim:tokens=25]" });
    const types: string[] = [];
    stream.on("event", (event) => types.push(event.type));
    const final = await stream.finalResponse();
    expect(types[0]).toBe("response.created");
    expect(types.at(-1)).toBe("response.completed");
    expect(types).toContain("response.output_text.delta");
    const retrieved = await client.responses.retrieve(final.id);
    expect(retrieved.output_text).toBe(final.output_text);
  });

  it("chains turns with previous_response_id over HTTP", async () => {
    const client = sdkClient();
    const tools = [
      {
        type: "function" as const,
        name: "exec_command",
        parameters: { type: "object", properties: { cmd: { type: "string" } }, required: ["cmd"] },
        strict: false,
      },
    ];
    const first = await client.responses.create({ model: MODEL, tools, input: "run `date` [sim:tools=1]" });
    const call = first.output.find((item) => item.type === "function_call");
    expect(call?.type).toBe("function_call");
    const second = await client.responses.create({
      model: MODEL,
      tools,
      previous_response_id: first.id,
      input: [
        {
          type: "function_call_output",
          call_id: (call as { call_id: string }).call_id,
          output: "Mon Nov 30",
        },
      ],
    });
    expect(second.output_text).toContain("Done after 1 tool call");
  });

  it("maps errors to the SDK's classes: 400, 401, 404", async () => {
    await expect(
      sdkClient().responses.create({ model: MODEL, input: "x", temperature: 9 }),
    ).rejects.toBeInstanceOf(OpenAI.BadRequestError);
    await expect(
      sdkClient("dg-wrong-key").responses.create({ model: MODEL, input: "x" }),
    ).rejects.toBeInstanceOf(OpenAI.AuthenticationError);
    await expect(sdkClient().responses.retrieve("resp_unknown")).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    const error = await sdkClient()
      .responses.create({ model: MODEL, input: "x", previous_response_id: "resp_unknown" })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as InstanceType<typeof OpenAI.BadRequestError>).code).toBe("previous_response_not_found");
  });

  it("returns an upstream failure before the first event as an HTTP error, or as response.failed on a stream", async () => {
    const client = sdkClient();
    await expect(
      client.responses.create({ model: MODEL, input: "x [sim:fail=before]" }),
    ).rejects.toBeInstanceOf(OpenAI.InternalServerError);
    const stream = await client.responses.create({
      model: MODEL,
      input: "y [sim:fail=before]",
      stream: true,
    });
    let last = "";
    for await (const event of stream) last = event.type;
    expect(last).toBe("response.failed");
  });

  it("cancels a response that is still in progress", async () => {
    const client = sdkClient();
    const stream = await client.responses.create({
      model: MODEL,
      input: "long [sim:tokens=5000]",
      stream: true,
    });
    let id = "";
    for await (const event of stream) {
      if (event.type === "response.created") id = event.response.id;
      if (event.type === "response.output_text.delta") break;
    }
    const cancelled = await client.responses.cancel(id);
    expect(cancelled.status).toBe("cancelled");
    expect((await client.responses.retrieve(id)).status).toBe("cancelled");
    await expect(client.responses.cancel(id)).rejects.toBeInstanceOf(OpenAI.BadRequestError);
  });

  it("never makes store:false responses readable over HTTP", async () => {
    const client = sdkClient();
    const created = await client.responses.create({ model: MODEL, input: "ephemeral", store: false });
    expect(created.status).toBe("completed");
    await expect(client.responses.retrieve(created.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    const error = await client.responses
      .create({ model: MODEL, input: "again", previous_response_id: created.id })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
  });

  it("puts a new HTTP chain in the session named by the session header", async () => {
    const session = uniqueSession("http-session");
    const client = sdkClient(undefined, { "session-id": session });
    const a = await client.responses.create({ model: MODEL, input: "one" });
    const b = await client.responses.create({ model: MODEL, input: "two" });
    // Same session → same owning Durable Object, which response ids embed.
    expect(a.id.slice(5, 48)).toBe(b.id.slice(5, 48));
    const other = await sdkClient().responses.create({ model: MODEL, input: "three" });
    expect(other.id.slice(5, 48)).not.toBe(a.id.slice(5, 48));
  });
});
