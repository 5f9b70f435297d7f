/**
 * The simulator's Gemini endpoints, `POST /v1beta/models/{model}:generateContent` and
 * `:streamGenerateContent` (`?alt=sse`), also under `/v1/`: authentication by `x-goog-api-key` (or the `key` query
 * parameter; 403 `PERMISSION_DENIED` without either), 404 `NOT_FOUND` for a model it does not
 * serve (ids starting `gemini-`), validation (validate.ts), implicit caching (implicit-cache.ts)
 * with the prefill time proportional to the uncached tokens, Gemini's turn planned by the shared
 * policy (policy.ts through context.ts), thinking with signed parts (signatures.ts), and the
 * answer as one `GenerateContentResponse` or as SSE `data:` chunks, each a
 * `GenerateContentResponse` with `usageMetadata`, the last one with the `finishReason`.
 * Thinking: a Gemini 3 model always thinks (its thinking cannot be turned off), a `gemini-2*`
 * model unless `thinkingBudget` is 0; thought summaries are streamed first as `thought: true`
 * parts when `includeThoughts` is set; `thoughtsTokenCount` reports the thinking. Signatures: the
 * first `functionCall` part of a response, or the last text part of an answer, carries one when
 * the model thinks. Gemini 3 models issue an `id` with each function call, `gemini-2*` ones none.
 * Directives (`[sim:…]`, simulator/README.md) steer it as for the other APIs: `fail=status:429`
 * answers `RESOURCE_EXHAUSTED` with a `RetryInfo` of `retry_after` seconds, `fail=midstream` ends
 * the stream with an error chunk.
 * Source: https://ai.google.dev/api/generate-content,
 * https://ai.google.dev/gemini-api/docs/thinking, https://ai.google.dev/gemini-api/docs/thought-signatures,
 * https://ai.google.dev/gemini-api/docs/caching, https://ai.google.dev/gemini-api/docs/api-key.
 */
import { createHash } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { lastUserText } from "../context.ts";
import { parseDirectives, stripDirectives } from "../directives.ts";
import { baseHeaders, parseJsonObject, readBody, trackDisconnect, writeFlushed } from "../http-util.ts";
import { newId } from "../ids.ts";
import { isJsonObject, type JsonObject } from "../json.ts";
import { planTurn } from "../policy.ts";
import type { SimState } from "../state.ts";
import { decodeMs, firstEventDelayMs, waitUntil } from "../timing.ts";
import { estimateTokens } from "../tokens.ts";
import { generateContext } from "./context.ts";
import { errorJson, GoogleError, invalidArgument, sendGoogleError, simulatedFailure } from "./errors.ts";
import { enforcesSignatures, validateGenerate } from "./validate.ts";

/** Model ids the simulator serves. */
export const SERVED_MODEL = /^gemini-/;

/**
 * The path of a Gemini method: `/{version}/models/{model}:{method}`, `v1beta` (the REST
 * reference's) or `v1` (what `@google/genai` 3.x calls by default).
 */
export const GENERATE_PATH = /^\/(v1|v1beta)\/models\/([^/:]+):(generateContent|streamGenerateContent)$/;

function chunks(text: string, size: number): string[] {
  const points = Array.from(text);
  const out: string[] = [];
  for (let i = 0; i < points.length; i += size) out.push(points.slice(i, i + size).join(""));
  return out;
}

function keyOf(req: IncomingMessage, url: URL): string | null {
  const header = req.headers["x-goog-api-key"];
  if (typeof header === "string" && header !== "") return header;
  return url.searchParams.get("key") || null;
}

/** Whether the model thinks for this request. */
function thinks(model: string, body: JsonObject): boolean {
  const config = isJsonObject(body.generationConfig) ? body.generationConfig.thinkingConfig : undefined;
  if (enforcesSignatures(model)) return true;
  return !(isJsonObject(config) && config.thinkingBudget === 0);
}

function includesThoughts(body: JsonObject): boolean {
  const config = isJsonObject(body.generationConfig) ? body.generationConfig.thinkingConfig : undefined;
  return isJsonObject(config) && config.includeThoughts === true;
}

/** Handles `POST /{version}/models/{model}:generateContent` and `:streamGenerateContent`. */
export async function handleGenerate(
  state: SimState,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  route: { version: string; model: string; method: string },
): Promise<void> {
  const { version, model, method } = route;
  const raw = await readBody(req);
  const modelStartMs = Date.now();
  const body = parseJsonObject(raw);
  const key = keyOf(req, url);
  const fingerprint = key ? createHash("sha256").update(key).digest("hex").slice(0, 16) : null;
  const record = state.recorder.begin("gemini", url.pathname, raw, body, fingerprint);
  const finish = (status: number, note = "") => {
    record.status = status;
    state.recorder.changed();
    state.log(`POST ${url.pathname} → ${status} ${note}(${Date.now() - modelStartMs} ms)`);
  };
  try {
    if (!key) {
      throw new GoogleError(
        403,
        "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.",
      );
    }
    if (!SERVED_MODEL.test(model)) {
      throw new GoogleError(
        404,
        `models/${model} is not found for API version ${version}, or is not supported for generateContent. Call ListModels to see the list of available models and their supported methods.`,
      );
    }
    if (!body) throw invalidArgument("Invalid JSON payload received.");
    const stream = method === "streamGenerateContent";
    if (stream && url.searchParams.get("alt") !== "sse") {
      throw invalidArgument("The simulator streams with alt=sse only (as Google's SDKs ask).");
    }
    const turns = validateGenerate(body, model, state.gemini.signer);
    await answer(state, res, body, model, stream, `${model}\n${fingerprint}`, modelStartMs, record, turns);
    finish(200);
  } catch (cause) {
    if (!(cause instanceof GoogleError)) throw cause;
    sendGoogleError(res, cause);
    finish(cause.code, `${cause.status} `);
  }
}

async function answer(
  state: SimState,
  res: ServerResponse,
  body: JsonObject,
  model: string,
  stream: boolean,
  scope: string,
  modelStartMs: number,
  record: Parameters<typeof trackDisconnect>[1],
  turns: ReturnType<typeof validateGenerate>,
): Promise<void> {
  const ctx = generateContext(body, turns);
  record.contextItemCount = ctx.items.length;
  const userText = lastUserText(ctx.items);
  const directives = parseDirectives(userText);
  if (directives.fail?.kind === "before") {
    const code = directives.fail.status;
    record.simulatedFailure = `status:${code}`;
    throw simulatedFailure(code, code === 429 ? (directives.retryAfterS ?? 1) : null);
  }
  const usage = state.gemini.cache.account(scope, body);
  const plan = planTurn(ctx, directives);
  const thinking = thinks(model, body);
  const signer = state.gemini.signer;
  const calls = ctx.items.filter((item) => item.type === "function_call").length;
  const thought = thinking
    ? `Thinking after ${calls} call(s) about: ${stripDirectives(userText).slice(0, 80)}`
    : "";
  const thoughtsTokens = estimateTokens(thought);
  /** The parts of the answer, one streamed chunk each. */
  const pieces: JsonObject[][] = [];
  if (thinking && includesThoughts(body)) {
    for (const text of chunks(thought, directives.deltaChars)) pieces.push([{ text, thought: true }]);
  }
  const callParts: JsonObject[] = [];
  let candidatesTokens = 0;
  for (const item of plan.items) {
    if (item.type === "message") {
      candidatesTokens += estimateTokens(item.text);
      const texts = chunks(item.text, directives.deltaChars).map((text): JsonObject => ({ text }));
      const last = texts.at(-1);
      if (last && thinking) last.thoughtSignature = signer.sign(last);
      for (const part of texts) pieces.push([part]);
    } else {
      const args: unknown = JSON.parse(item.arguments);
      candidatesTokens += estimateTokens(item.arguments);
      const call: JsonObject = { name: item.name, args };
      if (enforcesSignatures(model)) call.id = newId("", 6);
      const part: JsonObject = { functionCall: call };
      if (thinking && callParts.length === 0) part.thoughtSignature = signer.sign({ functionCall: call });
      callParts.push(part);
    }
  }
  if (callParts.length > 0) pieces.push(callParts); // Gemini sends a response's calls whole, together
  const finishReason = plan.truncated ? "MAX_TOKENS" : "STOP";
  const usageMetadata = (final: boolean): JsonObject => {
    const candidates = final ? candidatesTokens : 0;
    const thoughts = final ? thoughtsTokens : 0;
    const out: JsonObject = {
      promptTokenCount: usage.prompt,
      candidatesTokenCount: candidates,
      totalTokenCount: usage.prompt + candidates + thoughts,
      promptTokensDetails: [{ modality: "TEXT", tokenCount: usage.prompt }],
    };
    if (usage.cached > 0) {
      out.cachedContentTokenCount = usage.cached;
      out.cacheTokensDetails = [{ modality: "TEXT", tokenCount: usage.cached }];
    }
    if (thoughts > 0) out.thoughtsTokenCount = thoughts;
    return out;
  };
  const responseId = newId("", 8);
  const chunkJson = (parts: JsonObject[], final: boolean): JsonObject => {
    const candidate: JsonObject = { content: { parts, role: "model" }, index: 0 };
    if (final) candidate.finishReason = finishReason;
    return { candidates: [candidate], usageMetadata: usageMetadata(final), modelVersion: model, responseId };
  };
  const firstAt = firstEventDelayMs(state.timing, usage.prompt - usage.cached, directives.delayMs);
  const tracker = trackDisconnect(res, record, state.recorder);
  if (!stream) {
    const output = candidatesTokens + thoughtsTokens;
    await waitUntil(modelStartMs, firstAt + decodeMs(state.timing, output), tracker.signal);
    const text = JSON.stringify(
      chunkJson(
        mergeText(pieces.flat(), (part) => signer.sign(part)),
        true,
      ),
    );
    res.writeHead(200, { ...baseHeaders(), "content-type": "application/json; charset=UTF-8" });
    res.end(text);
    return;
  }
  await waitUntil(modelStartMs, firstAt, tracker.signal);
  if (tracker.signal.aborted) return;
  res.writeHead(200, {
    ...baseHeaders(),
    "content-type": "text/event-stream",
    "cache-control": "no-cache",
  });
  let decoded = 0;
  for (const [index, parts] of pieces.entries()) {
    if (tracker.signal.aborted) return;
    if (directives.fail?.kind === "midstream" && index >= 3) {
      record.simulatedFailure = "midstream";
      await writeFlushed(res, `data: ${JSON.stringify(errorJson(simulatedFailure(503, null)))}\r\n\r\n`);
      res.end();
      return;
    }
    const final = index === pieces.length - 1;
    await writeFlushed(res, `data: ${JSON.stringify(chunkJson(parts, final))}\r\n\r\n`);
    decoded += parts.reduce((sum, part) => sum + estimateTokens(JSON.stringify(part)), 0);
    await waitUntil(modelStartMs, firstAt + decodeMs(state.timing, decoded), tracker.signal);
  }
  res.end();
}

/**
 * A non-streamed answer's parts: consecutive answer text parts joined into one (as Gemini
 * answers), signed again over the joined text when the last of them was signed.
 */
function mergeText(parts: JsonObject[], sign: (part: JsonObject) => string): JsonObject[] {
  const out: JsonObject[] = [];
  const answerText = (part: JsonObject | undefined) =>
    typeof part?.text === "string" && part.thought !== true;
  for (const part of parts) {
    const last = out.at(-1);
    if (last && answerText(last) && answerText(part)) {
      last.text = `${String(last.text)}${String(part.text)}`;
      if (part.thoughtSignature !== undefined) last.thoughtSignature = sign({ text: last.text });
    } else out.push({ ...part });
  }
  return out;
}
