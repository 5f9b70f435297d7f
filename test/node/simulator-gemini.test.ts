/**
 * The simulator's Gemini `streamGenerateContent` / `generateContent` against the official
 * `@google/genai` SDK: the SDK parses its SSE chunks (text, thought summaries, function calls with
 * ids and thought signatures, usage with `thoughtsTokenCount`), a tool loop through the SDK's own
 * chat history round-trips the signatures (a missing or altered one is refused with Gemini 3's
 * 400), function responses are paired with their calls, implicit caching reports the prefix a
 * previous request sent as `cachedContentTokenCount`, and errors come in Google's shapes (403, 404
 * for a model it does not serve, 429 `RESOURCE_EXHAUSTED` with `RetryInfo`, 503 `UNAVAILABLE`).
 */
import { type Content, type FunctionDeclaration, GoogleGenAI } from "@google/genai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningSimulator, startSimulator } from "../../simulator/server.ts";

let sim: RunningSimulator;
let ai: GoogleGenAI;
const MODEL = "gemini-3-flash-sim";

const shell: FunctionDeclaration = {
  name: "exec_command",
  description: "Runs a shell command.",
  parametersJsonSchema: { type: "object", properties: { cmd: { type: "string" } }, required: ["cmd"] },
};

beforeAll(async () => {
  sim = await startSimulator({
    port: 0,
    quiet: true,
    decodeTokensPerSecond: 50_000,
    geminiCacheMinTokens: 64,
  });
  ai = new GoogleGenAI({
    apiKey: "sim-key",
    httpOptions: { baseUrl: sim.url, retryOptions: { attempts: 1 } },
  });
});
afterAll(async () => {
  await sim.close();
});

/** The SDK's error, its status and the envelope it carries in its message. */
async function failure(
  promise: Promise<unknown>,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const error = (await promise.then(
    () => null,
    (e: unknown) => e,
  )) as { status?: number; message?: string } | null;
  expect(error).not.toBeNull();
  const json = /\{.*\}/s.exec(error?.message ?? "")?.[0] ?? "{}";
  return { status: error?.status ?? 0, body: JSON.parse(json) as Record<string, unknown> };
}

describe("simulator Gemini generateContent with @google/genai", () => {
  it("streams a text answer with thought summaries the SDK reads", async () => {
    const stream = await ai.models.generateContentStream({
      model: MODEL,
      contents: "Say something. [sim:tokens=12]",
      config: { thinkingConfig: { includeThoughts: true, thinkingLevel: "LOW" as never } },
    });
    const texts: string[] = [];
    const thoughts: string[] = [];
    let last: Awaited<ReturnType<typeof stream.next>>["value"];
    for await (const chunk of stream) {
      for (const part of chunk.candidates?.[0]?.content?.parts ?? []) {
        if (part.thought) thoughts.push(part.text ?? "");
        else texts.push(part.text ?? "");
      }
      last = chunk;
    }
    expect(thoughts.join("")).toMatch(/^Thinking after 0 call/);
    expect(texts.join("").length).toBeGreaterThan(0);
    expect(last?.candidates?.[0]?.finishReason).toBe("STOP");
    expect(last?.usageMetadata?.thoughtsTokenCount).toBeGreaterThan(0);
    expect(last?.usageMetadata?.candidatesTokenCount).toBeGreaterThan(0);
    expect(last?.usageMetadata?.promptTokenCount).toBeGreaterThan(0);
  });

  it("runs a tool loop through the SDK's chat; every call comes back with its signature", async () => {
    const chat = ai.chats.create({ model: MODEL, config: { tools: [{ functionDeclarations: [shell] }] } });
    let response = await chat.sendMessage({ message: "Run `ls -la` twice. [sim:tools=2]" });
    for (let turn = 0; turn < 2; turn++) {
      const calls = response.functionCalls ?? [];
      expect(calls).toHaveLength(1);
      expect(calls[0]).toMatchObject({ name: "exec_command", args: { cmd: "ls -la" } });
      expect(typeof calls[0]?.id).toBe("string");
      const signed = response.candidates?.[0]?.content?.parts?.[0];
      expect(typeof signed?.thoughtSignature).toBe("string");
      response = await chat.sendMessage({
        message: [
          { functionResponse: { id: calls[0]?.id ?? "", name: "exec_command", response: { output: "ok" } } },
        ],
      });
    }
    expect(response.functionCalls).toBeUndefined();
    expect(response.text).toMatch(/^Done after 2 tool call/);

    const history = chat.getHistory();
    const stripped = structuredClone(history) as Content[];
    for (const content of stripped) for (const part of content.parts ?? []) delete part.thoughtSignature;
    const missing = await failure(
      ai.models.generateContent({
        model: MODEL,
        contents: stripped.slice(0, -1),
        config: { tools: [{ functionDeclarations: [shell] }] },
      }),
    );
    expect(missing.status).toBe(400);
    expect(missing.body).toMatchObject({
      error: {
        code: 400,
        status: "INVALID_ARGUMENT",
        message: expect.stringContaining("missing a thought_signature"),
      },
    });

    const altered = structuredClone(history) as Content[];
    const call = altered[1]?.parts?.[0]?.functionCall;
    if (call) call.args = { cmd: "rm -rf /" };
    const corrupted = await failure(
      ai.models.generateContent({
        model: MODEL,
        contents: altered.slice(0, -1),
        config: { tools: [{ functionDeclarations: [shell] }] },
      }),
    );
    expect(corrupted.status).toBe(400);
    expect(JSON.stringify(corrupted.body)).toContain("Corrupted thought signature");
  });

  it("does not require signatures of a Gemini 2.5 model, which issues calls without ids", async () => {
    const contents: Content[] = [{ role: "user", parts: [{ text: "Run `pwd`. [sim:tools=1]" }] }];
    const first = await ai.models.generateContent({
      model: "gemini-2.5-flash-sim",
      contents,
      config: { tools: [{ functionDeclarations: [shell] }], thinkingConfig: { thinkingBudget: 0 } },
    });
    const call = first.functionCalls?.[0];
    expect(call?.id).toBeUndefined();
    expect(first.candidates?.[0]?.content?.parts?.[0]?.thoughtSignature).toBeUndefined();
    contents.push(first.candidates?.[0]?.content as Content, {
      role: "user",
      parts: [{ functionResponse: { name: "exec_command", response: { output: "/home" } } }],
    });
    const second = await ai.models.generateContent({
      model: "gemini-2.5-flash-sim",
      contents,
      config: { tools: [{ functionDeclarations: [shell] }], thinkingConfig: { thinkingBudget: 0 } },
    });
    expect(second.text).toMatch(/Last output: \/home/);
  });

  it("refuses unpaired function responses", async () => {
    const contents: Content[] = [
      { role: "user", parts: [{ text: "hi" }] },
      {
        role: "model",
        parts: [
          { functionCall: { name: "exec_command", args: {} } },
          { functionCall: { name: "exec_command", args: { cmd: "x" } } },
        ],
      },
      { role: "user", parts: [{ functionResponse: { name: "exec_command", response: { output: "1" } } }] },
    ];
    const unpaired = await failure(
      ai.models.generateContent({
        model: "gemini-2.5-flash-sim",
        contents,
        config: { tools: [{ functionDeclarations: [shell] }] },
      }),
    );
    expect(unpaired).toMatchObject({ status: 400, body: { error: { status: "INVALID_ARGUMENT" } } });
    expect(JSON.stringify(unpaired.body)).toContain("number of function response parts is equal");
  });

  it("reads the prefix a previous request sent from its implicit cache", async () => {
    const system = { parts: [{ text: "You are terse. ".repeat(60) }] };
    const question: Content = { role: "user", parts: [{ text: "Question one. ".repeat(20) }] };
    const first = await ai.models.generateContent({
      model: MODEL,
      contents: [question],
      config: { systemInstruction: system },
    });
    expect(first.usageMetadata?.cachedContentTokenCount).toBeUndefined();
    const second = await ai.models.generateContent({
      model: MODEL,
      contents: [
        question,
        first.candidates?.[0]?.content as Content,
        { role: "user", parts: [{ text: "Two." }] },
      ],
      config: { systemInstruction: system },
    });
    expect(second.usageMetadata?.cachedContentTokenCount).toBe(first.usageMetadata?.promptTokenCount);
    expect(second.usageMetadata?.promptTokenCount).toBeGreaterThan(
      first.usageMetadata?.promptTokenCount ?? 0,
    );
  });

  it("answers in Google's error shapes", async () => {
    const noKey = await fetch(`${sim.url}/v1beta/models/${MODEL}:generateContent`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ contents: [{ role: "user", parts: [{ text: "x" }] }] }),
    });
    expect(noKey.status).toBe(403);
    expect(await noKey.json()).toMatchObject({ error: { code: 403, status: "PERMISSION_DENIED" } });
    const unknown = await failure(ai.models.generateContent({ model: "gpt-4o", contents: "x" }));
    expect(unknown).toMatchObject({ status: 404, body: { error: { status: "NOT_FOUND" } } });
    const limited = await failure(
      ai.models.generateContentStream({
        model: MODEL,
        contents: "x [sim:fail=status:429] [sim:retry_after=3]",
      }),
    );
    expect(limited).toMatchObject({
      status: 429,
      body: {
        error: {
          status: "RESOURCE_EXHAUSTED",
          details: [{ "@type": "type.googleapis.com/google.rpc.RetryInfo", retryDelay: "3s" }],
        },
      },
    });
    const overloaded = await failure(
      ai.models.generateContent({ model: MODEL, contents: "x [sim:fail=status:503]" }),
    );
    expect(overloaded).toMatchObject({ status: 503, body: { error: { status: "UNAVAILABLE" } } });
    const midstream = await failure(
      (async () => {
        const stream = await ai.models.generateContentStream({
          model: MODEL,
          contents: "Say something long. [sim:tokens=60] [sim:delta_chars=4] [sim:fail=midstream]",
        });
        for await (const _chunk of stream) {
          // read until the error chunk
        }
      })(),
    );
    expect(midstream.status).toBe(503);
  });
});
