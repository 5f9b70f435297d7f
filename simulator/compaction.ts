/**
 * Compaction in the simulator, as OpenAI serves it: `POST /v1/responses/compact` (the compacted
 * output: the context's user messages followed by one `compaction` item), the `compaction_trigger`
 * input item of `POST /v1/responses` (the response's only output is one `compaction` item), and
 * the verification of compaction items sent back as input. Also `POST /v1/responses/input_tokens`,
 * counted exactly as a turn's `usage.input_tokens` (tokens.ts estimate over the same segments).
 * A compaction item's `encrypted_content` is `simc1.<base64url(JSON {summary})>.<HMAC-SHA256>`
 * keyed by a secret of this simulator instance: opaque to clients, and another simulator's (or a
 * changed) item is refused with 400 `invalid_encrypted_content`, as OpenAI refuses encrypted
 * content it did not issue. The summary is deterministic: the user messages' text, abridged.
 * Source: https://platform.openai.com/docs/api-reference/responses/compact,
 *   https://platform.openai.com/docs/api-reference/responses/input-tokens
 */
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { contentText, normalizeInput } from "./context.ts";
import { invalidRequest, previousResponseNotFound, SimError, toSimError } from "./errors.ts";
import { receivePost, sendError, sendJson } from "./http-util.ts";
import { newId } from "./ids.ts";
import { isJsonObject, type JsonObject } from "./json.ts";
import { contextSegments, segmentTokens } from "./prefix-cache.ts";
import { makeUsage } from "./response-object.ts";
import type { SimState } from "./state.ts";
import { estimateTokens } from "./tokens.ts";

const PREFIX = "simc1.";

/** This simulator instance's compaction secret (per process: every simulator of a process shares none). */
export function newCompactionSecret(): Buffer {
  return randomBytes(32);
}

function mac(secret: Buffer, body: string): string {
  return createHmac("sha256", secret).update(body).digest("base64url");
}

/** Seals `summary` into an `encrypted_content`. */
export function sealSummary(secret: Buffer, summary: string): string {
  const body = Buffer.from(JSON.stringify({ summary }), "utf8").toString("base64url");
  return `${PREFIX}${body}.${mac(secret, body)}`;
}

/** The summary of a compaction item this simulator issued, or null for anything else. */
export function openSummary(secret: Buffer, content: unknown): string | null {
  if (typeof content !== "string" || !content.startsWith(PREFIX)) return null;
  const [body, tag] = content.slice(PREFIX.length).split(".");
  if (!body || !tag) return null;
  const expected = Buffer.from(mac(secret, body));
  const given = Buffer.from(tag);
  if (expected.length !== given.length || !timingSafeEqual(expected, given)) return null;
  try {
    const parsed: unknown = JSON.parse(Buffer.from(body, "base64url").toString("utf8"));
    return isJsonObject(parsed) && typeof parsed.summary === "string" ? parsed.summary : null;
  } catch {
    return null;
  }
}

/**
 * Refuses a compaction item this simulator did not issue (strict validation).
 * @param items the whole context; `inputStart` is the index of the request's first input item.
 */
export function validateCompactions(secret: Buffer, items: readonly JsonObject[], inputStart: number): void {
  items.forEach((item, index) => {
    if (item.type !== "compaction") return;
    if (openSummary(secret, item.encrypted_content) !== null) return;
    const param = index >= inputStart ? `input[${index - inputStart}]` : "previous_response_id";
    throw invalidRequest(
      "The encrypted content for this compaction item could not be verified.",
      param,
      "invalid_encrypted_content",
    );
  });
}

/**
 * Takes a trailing `compaction_trigger` off `items` ("Must be the final input item": anywhere else
 * is a 400).
 */
export function splitTrigger(items: readonly JsonObject[]): { items: JsonObject[]; trigger: boolean } {
  const last = items.length - 1;
  items.forEach((item, index) => {
    if (item.type === "compaction_trigger" && index !== last) {
      throw invalidRequest(
        "A compaction_trigger item must be the final input item.",
        `input[${index}]`,
        "invalid_value",
      );
    }
  });
  const trigger = last >= 0 && items[last]?.type === "compaction_trigger";
  return { items: trigger ? items.slice(0, last) : [...items], trigger };
}

/** The deterministic summary of a context: what its user messages said, abridged. */
export function summaryOf(secret: Buffer, items: readonly JsonObject[]): string {
  const lines: string[] = [];
  for (const item of items) {
    if (item.type === "compaction") {
      const earlier = openSummary(secret, item.encrypted_content);
      if (earlier) lines.push(earlier);
    } else if (item.type === "message" && item.role === "user") {
      const text = contentText(item.content).trim();
      if (text) lines.push(`user: ${text.slice(0, 200)}`);
    }
  }
  return `Summary of ${items.length} item(s).\n${lines.join("\n")}`.slice(0, 4000);
}

/** A new compaction output item for `items`. */
export function compactionItem(secret: Buffer, items: readonly JsonObject[]): JsonObject {
  return {
    id: newId("cmp_", 24),
    type: "compaction",
    encrypted_content: sealSummary(secret, summaryOf(secret, items)),
  };
}

/** The context of a unary request: history of `previous_response_id` (stored only) + its input. */
function contextOf(state: SimState, body: JsonObject): { items: JsonObject[]; inputStart: number } {
  const previous = body.previous_response_id;
  let history: JsonObject[] = [];
  if (typeof previous === "string" && previous !== "") {
    const node = state.store.get(previous);
    if (!node) throw previousResponseNotFound(previous);
    history = node.items;
  }
  const input = splitTrigger(normalizeInput(body.input)).items;
  return { items: [...history, ...input], inputStart: history.length };
}

async function handleUnary(
  state: SimState,
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
  answer: (body: JsonObject) => unknown,
): Promise<void> {
  const { body, finish } = await receivePost(state, req, "http", path);
  try {
    if (!body) throw invalidRequest("We could not parse the JSON body of your request.");
    sendJson(res, 200, answer(body));
    finish(200);
  } catch (e) {
    const err = toSimError(e);
    sendError(res, err);
    finish(err.status, `${err.code ?? err.type} `);
  }
}

/** `POST /v1/responses/compact`. */
export function handleCompact(state: SimState, req: IncomingMessage, res: ServerResponse): Promise<void> {
  return handleUnary(state, req, res, "/v1/responses/compact", (body) => {
    if (typeof body.model !== "string" || body.model === "") {
      throw new SimError(
        400,
        "invalid_request_error",
        "Missing required parameter: 'model'.",
        "missing_required_parameter",
        "model",
      );
    }
    const { items, inputStart } = contextOf(state, body);
    if (items.length === 0) {
      throw invalidRequest("Missing required parameter: 'input'.", "input", "missing_required_parameter");
    }
    if (state.strict) validateCompactions(state.compactionSecret, items, inputStart);
    const users = items
      .filter((item) => item.type === "message" && item.role === "user")
      .map((item) => ({
        ...item,
        id: typeof item.id === "string" ? item.id : newId("msg_"),
        status: "completed",
        content:
          typeof item.content === "string" ? [{ type: "input_text", text: item.content }] : item.content,
      }));
    const compaction = compactionItem(state.compactionSecret, items);
    const inputTokens = segmentTokens(contextSegments(undefined, body.instructions, items));
    return {
      id: newId("resp_", 24),
      object: "response.compaction",
      created_at: Math.floor(Date.now() / 1000),
      output: [...users, compaction],
      usage: makeUsage(inputTokens, 0, estimateTokens(String(compaction.encrypted_content))),
    };
  });
}

/** `POST /v1/responses/input_tokens`: the `usage.input_tokens` a turn with this body reports. */
export function handleInputTokens(state: SimState, req: IncomingMessage, res: ServerResponse): Promise<void> {
  return handleUnary(state, req, res, "/v1/responses/input_tokens", (body) => {
    const { items, inputStart } = contextOf(state, body);
    if (state.strict) validateCompactions(state.compactionSecret, items, inputStart);
    const tokens = segmentTokens(contextSegments(body.tools, body.instructions, items));
    return { object: "response.input_tokens", input_tokens: tokens };
  });
}
