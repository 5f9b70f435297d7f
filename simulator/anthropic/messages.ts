/**
 * The simulator's Anthropic Messages endpoint, `POST /v1/messages`: authentication by
 * `x-api-key` or `Authorization: Bearer` (what `@anthropic-ai/sdk` 1.x sends; 401 without either) and the required `anthropic-version` header, 404 `not_found_error`
 * for a model it does not serve (ids starting `claude-`), validation (validate.ts), prompt
 * caching (prompt-cache.ts) with the prefill time proportional to the uncached tokens, Claude's
 * turn planned by the shared policy (policy.ts through context.ts), extended thinking with signed
 * blocks (signatures.ts), and the answer as a Message JSON or as Anthropic's SSE stream:
 * `message_start`, `ping`, per block `content_block_start` / `content_block_delta` (`text_delta`,
 * `input_json_delta`, `thinking_delta`, `signature_delta`) / `content_block_stop`,
 * `message_delta` (stop reason, cumulative usage), `message_stop`; a failure mid-stream is an
 * `event: error`. Directives (`[sim:…]`, simulator/README.md) steer it as for the other APIs.
 * Source: https://docs.anthropic.com/en/api/messages,
 * https://docs.anthropic.com/en/docs/build-with-claude/streaming,
 * https://docs.anthropic.com/en/api/versioning (the `anthropic-version` header).
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { lastUserText } from "../context.ts";
import { parseDirectives, stripDirectives } from "../directives.ts";
import { baseHeaders, parseJsonObject, readBody, trackDisconnect, writeFlushed } from "../http-util.ts";
import { newId } from "../ids.ts";
import type { JsonObject } from "../json.ts";
import { planTurn } from "../policy.ts";
import { keyFingerprint } from "../recorder.ts";
import type { SimState } from "../state.ts";
import { decodeMs, firstEventDelayMs, waitUntil } from "../timing.ts";
import { estimateTokens } from "../tokens.ts";
import { messagesContext } from "./context.ts";
import { AnthropicError, errorObject, invalid, sendAnthropicError } from "./errors.ts";
import type { CacheUsage } from "./prompt-cache.ts";
import { thinkingBudget, validateMessages } from "./validate.ts";

/** Model ids the simulator serves on `/v1/messages`. */
export const SERVED_MODEL = /^claude-/;

type OutBlock =
  | { type: "thinking"; thinking: string; signature: string }
  | { type: "redacted_thinking"; data: string }
  | { type: "text"; text: string }
  | { type: "tool_use"; id: string; name: string; input: unknown; json: string };

function usageJson(cache: CacheUsage, outputTokens: number): JsonObject {
  return {
    input_tokens: cache.input_tokens,
    cache_creation_input_tokens: cache.cache_creation_input_tokens,
    cache_read_input_tokens: cache.cache_read_input_tokens,
    cache_creation: {
      ephemeral_5m_input_tokens: cache.ephemeral_5m_input_tokens,
      ephemeral_1h_input_tokens: cache.ephemeral_1h_input_tokens,
    },
    output_tokens: outputTokens,
  };
}

function blockJson(block: OutBlock): JsonObject {
  if (block.type === "tool_use")
    return { type: "tool_use", id: block.id, name: block.name, input: block.input };
  return { ...block };
}

function chunks(text: string, size: number): string[] {
  const points = Array.from(text);
  const out: string[] = [];
  for (let i = 0; i < points.length; i += size) out.push(points.slice(i, i + size).join(""));
  return out;
}

function sse(type: string, data: JsonObject): string {
  return `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
}

/** Handles `POST /v1/messages`. */
export async function handleMessages(
  state: SimState,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const raw = await readBody(req);
  const modelStartMs = Date.now();
  const body = parseJsonObject(raw);
  const apiKey = req.headers["x-api-key"];
  const bearer = /^Bearer\s+(\S+)/i.exec(req.headers.authorization ?? "")?.[1];
  const key = typeof apiKey === "string" && apiKey !== "" ? apiKey : (bearer ?? null);
  const record = state.recorder.begin(
    "anthropic",
    "/v1/messages",
    raw,
    body,
    key ? keyFingerprint(`Bearer ${key}`) : null,
  );
  const finish = (status: number, note = "") => {
    record.status = status;
    state.recorder.changed();
    state.log(`POST /v1/messages → ${status} ${note}(${Date.now() - modelStartMs} ms)`);
  };
  try {
    if (!key) throw new AnthropicError(401, "x-api-key header is required"); // or `Authorization: Bearer`, as the SDK sends it
    if (!req.headers["anthropic-version"]) throw invalid("anthropic-version: header is required");
    if (!body) throw invalid("The request body is not valid JSON.");
    if (typeof body.model === "string" && !SERVED_MODEL.test(body.model)) {
      throw new AnthropicError(404, `model: ${body.model}`);
    }
    validateMessages(body, state.anthropic.signer);
    await answer(state, req, res, body, modelStartMs, record);
    finish(200);
  } catch (cause) {
    if (!(cause instanceof AnthropicError)) throw cause;
    if (cause.message.startsWith("Simulated")) record.simulatedFailure = `status:${cause.status}`;
    sendAnthropicError(res, cause);
    finish(cause.status, `${cause.type} `);
  }
}

async function answer(
  state: SimState,
  req: IncomingMessage,
  res: ServerResponse,
  body: JsonObject,
  modelStartMs: number,
  record: Parameters<typeof trackDisconnect>[1],
): Promise<void> {
  const ctx = messagesContext(body);
  record.contextItemCount = ctx.items.length;
  const userText = lastUserText(ctx.items);
  const directives = parseDirectives(userText);
  if (directives.fail?.kind === "before") {
    const status = directives.fail.status;
    throw new AnthropicError(status, "Simulated upstream failure.", directives.retryAfterS);
  }
  const cache = state.anthropic.cache.account(body);
  const plan = planTurn(ctx, directives);
  const blocks: OutBlock[] = [];
  if (thinkingBudget(body) !== null) {
    if (directives.redacted)
      blocks.push({ type: "redacted_thinking", data: state.anthropic.signer.redactedData(newId("", 8)) });
    const calls = ctx.items.filter((item) => item.type === "function_call").length;
    const thinking = `Thinking after ${calls} call(s) about: ${stripDirectives(userText).slice(0, 80)}`;
    blocks.push({ type: "thinking", thinking, signature: state.anthropic.signer.sign(thinking) });
  }
  for (const item of plan.items) {
    if (item.type === "message") blocks.push({ type: "text", text: item.text });
    else {
      const input: unknown = JSON.parse(item.arguments);
      blocks.push({
        type: "tool_use",
        id: newId("toolu_", 12),
        name: item.name,
        input,
        json: JSON.stringify(input),
      });
    }
  }
  const stopReason = blocks.some((b) => b.type === "tool_use")
    ? "tool_use"
    : plan.truncated
      ? "max_tokens"
      : "end_turn";
  const outputTokens = blocks.reduce(
    (sum, b) =>
      sum +
      estimateTokens(
        b.type === "text" ? b.text : b.type === "thinking" ? b.thinking : b.type === "tool_use" ? b.json : "",
      ),
    0,
  );
  const uncached = cache.input_tokens + cache.cache_creation_input_tokens;
  const firstAt = firstEventDelayMs(state.timing, uncached, directives.delayMs);
  const tracker = trackDisconnect(res, record, state.recorder);
  const id = newId("msg_sim_", 12);
  const requestId = newId("req_");
  if (body.stream !== true) {
    await waitUntil(modelStartMs, firstAt + decodeMs(state.timing, outputTokens), tracker.signal);
    const text = JSON.stringify({
      id,
      type: "message",
      role: "assistant",
      model: body.model,
      content: blocks.map(blockJson),
      stop_reason: stopReason,
      stop_sequence: null,
      usage: usageJson(cache, outputTokens),
    });
    res.writeHead(200, { ...baseHeaders(), "request-id": requestId, "content-type": "application/json" });
    res.end(text);
    return;
  }
  await waitUntil(modelStartMs, firstAt, tracker.signal);
  if (tracker.signal.aborted) return;
  res.writeHead(200, {
    ...baseHeaders(),
    "request-id": requestId,
    "content-type": "text/event-stream; charset=utf-8",
    "cache-control": "no-cache",
  });
  const start = {
    id,
    type: "message",
    role: "assistant",
    model: body.model,
    content: [],
    stop_reason: null,
    stop_sequence: null,
    usage: usageJson(cache, 1),
  };
  await writeFlushed(res, sse("message_start", { message: start }));
  await writeFlushed(res, sse("ping", {}));
  let decoded = 0;
  let deltas = 0;
  const pace = async (text: string) => {
    decoded += estimateTokens(text);
    deltas++;
    await waitUntil(modelStartMs, firstAt + decodeMs(state.timing, decoded), tracker.signal);
  };
  for (const [index, block] of blocks.entries()) {
    if (tracker.signal.aborted) return;
    const initial =
      block.type === "thinking"
        ? { type: "thinking", thinking: "", signature: "" }
        : block.type === "text"
          ? { type: "text", text: "" }
          : block.type === "tool_use"
            ? { type: "tool_use", id: block.id, name: block.name, input: {} }
            : blockJson(block);
    await writeFlushed(res, sse("content_block_start", { index, content_block: initial }));
    const pieces =
      block.type === "thinking"
        ? chunks(block.thinking, directives.deltaChars).map((thinking) => ({
            type: "thinking_delta",
            thinking,
          }))
        : block.type === "text"
          ? chunks(block.text, directives.deltaChars).map((text) => ({ type: "text_delta", text }))
          : block.type === "tool_use"
            ? chunks(block.json, directives.deltaChars).map((partial_json) => ({
                type: "input_json_delta",
                partial_json,
              }))
            : [];
    if (block.type === "thinking")
      pieces.push({ type: "signature_delta", signature: block.signature } as never);
    for (const delta of pieces) {
      await writeFlushed(res, sse("content_block_delta", { index, delta }));
      await pace(Object.values(delta)[1] as string);
      if (directives.fail?.kind === "midstream" && deltas >= 3) {
        record.simulatedFailure = "midstream";
        await writeFlushed(res, sse("error", { error: errorObject(new AnthropicError(529, "Overloaded")) }));
        res.end();
        return;
      }
    }
    await writeFlushed(res, sse("content_block_stop", { index }));
  }
  await writeFlushed(
    res,
    sse("message_delta", {
      delta: { stop_reason: stopReason, stop_sequence: null },
      usage: usageJson(cache, outputTokens),
    }),
  );
  await writeFlushed(res, sse("message_stop", {}));
  res.end();
  void req;
}
