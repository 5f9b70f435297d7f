/**
 * `POST /v1/chat/completions`: the same policy as Responses over the Chat Completions wire
 * format. Streaming sends `data: {chat.completion.chunk}` lines (role chunk, text chunks of a
 * few tokens, tool calls with index/id/name first and argument fragments after, a finish chunk,
 * the usage chunk with `choices: []` when `stream_options.include_usage`, then `data: [DONE]`),
 * each as a separate write. Non-streaming returns a `chat.completion`.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import {
  asFunctionTools,
  chatToolChoiceToResponses,
  chatToolsToResponses,
  messagesToItems,
} from "./chat-convert.ts";
import { validateChatRequest } from "./chat-rules.ts";
import { lastUserText } from "./context.ts";
import { parseDirectives } from "./directives.ts";
import { invalidRequest, simulatedFailure, toSimError } from "./errors.ts";
import { chunkText } from "./events.ts";
import { baseHeaders, receivePost, sendError, sendJson, trackDisconnect, writeFlushed } from "./http-util.ts";
import { newId } from "./ids.ts";
import type { JsonObject } from "./json.ts";
import { type Plan, planTurn } from "./policy.ts";
import { contextSegments, segmentTokens } from "./prefix-cache.ts";
import { DEFAULT_MODEL } from "./responses-turn.ts";
import type { SimState } from "./state.ts";
import { decodeMs, firstEventDelayMs, waitUntil } from "./timing.ts";
import { estimateTokens } from "./tokens.ts";

/** A chunk and when it is due (ms after the request arrived). */
interface TimedChunk {
  atMs: number;
  data: JsonObject;
}

function chatUsage(prompt: number, cached: number, completion: number): JsonObject {
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    prompt_tokens_details: { cached_tokens: cached, audio_tokens: 0 },
    completion_tokens_details: {
      reasoning_tokens: 0,
      audio_tokens: 0,
      accepted_prediction_tokens: 0,
      rejected_prediction_tokens: 0,
    },
  };
}

function finishReason(plan: Plan): "stop" | "length" | "tool_calls" {
  if (plan.items.some((i) => i.type === "function_call")) return "tool_calls";
  return plan.truncated ? "length" : "stop";
}

function planText(plan: Plan): string {
  return plan.items.map((i) => (i.type === "message" ? i.text : "")).join("");
}

/** Builds the timed stream chunks (without the usage chunk and `[DONE]`). */
function buildChunks(
  base: JsonObject,
  plan: Plan,
  firstAtMs: number,
  msPerToken: number,
  withUsage: boolean,
): TimedChunk[] {
  const chunks: TimedChunk[] = [];
  let t = firstAtMs;
  const push = (delta: JsonObject, finish: string | null = null): void => {
    const data: JsonObject = {
      ...base,
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
    };
    if (withUsage) data.usage = null;
    chunks.push({ atMs: t, data });
  };
  const calls = plan.items.filter((i) => i.type === "function_call");
  push({ role: "assistant", content: calls.length > 0 ? null : "", refusal: null });
  for (const piece of chunkText(planText(plan))) {
    t += estimateTokens(piece) * msPerToken;
    push({ content: piece });
  }
  calls.forEach((call, index) => {
    push({
      tool_calls: [
        { index, id: call.callId, type: "function", function: { name: call.name, arguments: "" } },
      ],
    });
    for (const piece of chunkText(call.arguments)) {
      t += estimateTokens(piece) * msPerToken;
      push({ tool_calls: [{ index, function: { arguments: piece } }] });
    }
  });
  push({}, finishReason(plan));
  return chunks;
}

/**
 * `split_chars=1`: writes `text` as several `res.write` calls, each cut right after the lead
 * byte of a multi-byte UTF-8 character (so the rest of that character arrives in the next write),
 * 5 ms apart so the pieces leave as separate network writes. Text without such characters is one
 * write. Tests that a client decodes a code point split across reads.
 */
async function writeSplitChars(res: ServerResponse, text: string): Promise<void> {
  const write = (piece: Buffer) =>
    new Promise<void>((resolve) => (res.destroyed ? resolve() : res.write(piece, () => resolve())));
  const bytes = Buffer.from(text, "utf8");
  let start = 0;
  for (let i = 0; i < bytes.length; i++) {
    if ((bytes[i] ?? 0) < 0xc0) continue; // not the lead byte of a multi-byte sequence
    await write(bytes.subarray(start, i + 1));
    start = i + 1;
    await new Promise<void>((resolve) => setTimeout(resolve, 5));
  }
  await write(bytes.subarray(start));
}

/** Handles one `POST /v1/chat/completions` request end to end (never throws). */
export async function handleChatCompletions(
  state: SimState,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const { body, record, modelStartMs, finish } = await receivePost(
    state,
    req,
    "chat",
    "/v1/chat/completions",
  );

  const tracker = trackDisconnect(res, record, state.recorder);
  let prepared: ReturnType<typeof prepareChat>;
  try {
    if (!body) throw invalidRequest("We could not parse the JSON body of your request.");
    prepared = prepareChat(state, body);
    record.inputItemCount = Array.isArray(body.messages) ? body.messages.length : 0;
    record.contextItemCount = prepared.contextItems;
    if (prepared.failBefore !== null) {
      record.simulatedFailure = "before";
      throw simulatedFailure(prepared.failBefore);
    }
  } catch (e) {
    const err = toSimError(e);
    sendError(res, err);
    finish(err.status, `${err.code ?? err.type} `);
    return;
  }
  const { base, plan, usage, firstAtMs, msPerToken, midstream, splitChars } = prepared;
  const note = `ctx=${prepared.contextItems} in=${usage.prompt_tokens} out=${usage.completion_tokens} `;

  if (body?.stream !== true) {
    const text = planText(plan);
    const calls = plan.items.filter((i) => i.type === "function_call");
    const endAtMs =
      firstAtMs +
      estimateTokens(text) * msPerToken +
      calls.reduce((n, c) => n + estimateTokens(c.arguments) * msPerToken, 0);
    await waitUntil(modelStartMs, endAtMs, tracker.signal);
    if (tracker.signal.aborted) return finish(null, "client went away ");
    if (midstream) {
      record.simulatedFailure = "midstream";
      tracker.drop();
      return finish(null, "simulated drop ");
    }
    const message: JsonObject = {
      role: "assistant",
      content: calls.length > 0 && text === "" ? null : text,
      refusal: null,
      annotations: [],
    };
    if (calls.length > 0) {
      message.tool_calls = calls.map((c) => ({
        id: c.callId,
        type: "function",
        function: { name: c.name, arguments: c.arguments },
      }));
    }
    sendJson(res, 200, {
      ...base,
      object: "chat.completion",
      choices: [{ index: 0, message, logprobs: null, finish_reason: finishReason(plan) }],
      usage,
    });
    return finish(200, note);
  }

  const includeUsage =
    typeof body.stream_options === "object" &&
    body.stream_options !== null &&
    (body.stream_options as JsonObject).include_usage === true &&
    !prepared.noUsage;
  const chunks = buildChunks(
    { ...base, object: "chat.completion.chunk" },
    plan,
    firstAtMs,
    msPerToken,
    includeUsage,
  );
  const lastAt = chunks[chunks.length - 1]?.atMs ?? firstAtMs;
  if (includeUsage) {
    chunks.push({ atMs: lastAt, data: { ...base, object: "chat.completion.chunk", choices: [], usage } });
  }
  res.writeHead(200, {
    ...baseHeaders(),
    "content-type": "text/event-stream; charset=utf-8",
    "cache-control": "no-cache",
    connection: "keep-alive",
  });
  res.flushHeaders();
  const stopBefore = midstream ? Math.min(chunks.length - 1, 4) : chunks.length;
  for (let i = 0; i < stopBefore; i++) {
    const chunk = chunks[i];
    if (!chunk) break;
    await waitUntil(modelStartMs, chunk.atMs, tracker.signal);
    if (tracker.signal.aborted) return finish(200, "client went away mid-stream ");
    const line = `data: ${JSON.stringify(chunk.data)}\n\n`;
    await (splitChars ? writeSplitChars(res, line) : writeFlushed(res, line));
  }
  if (midstream) {
    record.simulatedFailure = "midstream";
    tracker.drop();
    return finish(200, "simulated mid-stream drop ");
  }
  await new Promise<void>((resolve) => setImmediate(resolve));
  res.end("data: [DONE]\n\n");
  finish(200, note);
}

/** Everything decided before the first byte of a chat completion. */
function prepareChat(state: SimState, body: JsonObject) {
  validateChatRequest(body, state.strict);
  const items = messagesToItems(body.messages);
  const tools = chatToolsToResponses(body.tools);
  const directives = parseDirectives(lastUserText(items));
  const maxTokens =
    typeof body.max_completion_tokens === "number" ? body.max_completion_tokens : body.max_tokens;
  const plan = planTurn(
    {
      items,
      tools: asFunctionTools(tools),
      toolChoice: chatToolChoiceToResponses(body.tool_choice),
      parallelToolCalls: body.parallel_tool_calls !== false,
      maxOutputTokens: typeof maxTokens === "number" ? maxTokens : null,
    },
    directives,
  );
  const outputItems: JsonObject[] = plan.items.map((i) =>
    i.type === "message"
      ? { type: "message", role: "assistant", content: i.text }
      : { type: "function_call", call_id: i.callId, name: i.name, arguments: i.arguments },
  );
  const cache = state.prefix.get(typeof body.prompt_cache_key === "string" ? body.prompt_cache_key : null);
  const segments = contextSegments(tools, null, items);
  const promptTokens = segmentTokens(segments);
  const cached = Math.min(promptTokens, cache.cachedTokens(segments));
  cache.remember(contextSegments(tools, null, [...items, ...outputItems]));
  const completion = plan.items.reduce(
    (n, i) => n + estimateTokens(i.type === "message" ? i.text : i.arguments),
    0,
  );
  return {
    base: {
      id: newId("chatcmpl-", 12),
      created: Math.floor(Date.now() / 1000),
      model: typeof body.model === "string" ? body.model : DEFAULT_MODEL,
      system_fingerprint: "fp_deltagate_sim",
    } as JsonObject,
    plan,
    usage: chatUsage(promptTokens, cached, completion) as JsonObject & {
      prompt_tokens: number;
      completion_tokens: number;
    },
    contextItems: items.length,
    firstAtMs: firstEventDelayMs(state.timing, promptTokens - cached, directives.delayMs),
    msPerToken: decodeMs(state.timing, 1),
    midstream: directives.fail?.kind === "midstream",
    splitChars: directives.splitChars,
    failBefore: directives.fail?.kind === "before" ? directives.fail.status : null,
    noUsage: directives.noUsage,
  };
}
