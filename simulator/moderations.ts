/**
 * `POST /v1/moderations` (https://platform.openai.com/docs/api-reference/moderations/create):
 * string | string[] | multimodal parts array, one result per string in order (a parts array is
 * one input). Deterministic: `violence` is flagged (score 0.9) when the text contains the word
 * "attack", the marker `[sim:flag]` or one of the server's flag words (`moderationFlagWords`);
 * otherwise every category is false with small hash-derived scores (< 0.001).
 * Scriptable like a real, imperfect server: a fixed latency (`moderationLatencyMs`), and
 * directives inside any input text — `[sim:mod_delay_ms=N]` (extra latency),
 * `[sim:mod_fail=status:NNN]` (that HTTP error), `[sim:mod_reply=not_json|no_results]` (a 200
 * answer no client can use). A client that gives up is recorded as `aborted`.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { invalidRequest, SimError, toSimError } from "./errors.ts";
import { baseHeaders, receivePost, sendError, sendJson, trackDisconnect } from "./http-util.ts";
import { newId } from "./ids.ts";
import { fnv1a, isJsonObject } from "./json.ts";
import type { SimState } from "./state.ts";
import { waitUntil } from "./timing.ts";

/** Moderation behaviour of one simulator (server options). */
export interface ModerationSettings {
  /** Latency of every answer, ms (default 0). */
  latencyMs: number;
  /** Extra words that flag a text (case-insensitive substrings), besides "attack" and `[sim:flag]`. */
  flagWords: readonly string[];
}

/** Defaults: instant answers, no extra flag words. */
export const DEFAULT_MODERATION: ModerationSettings = { latencyMs: 0, flagWords: [] };

/** The 13 moderation categories, in OpenAI's order. */
export const MODERATION_CATEGORIES = [
  "harassment",
  "harassment/threatening",
  "hate",
  "hate/threatening",
  "illicit",
  "illicit/violent",
  "self-harm",
  "self-harm/intent",
  "self-harm/instructions",
  "sexual",
  "sexual/minors",
  "violence",
  "violence/graphic",
] as const;

const IMAGE_CATEGORIES = new Set<string>([
  "self-harm",
  "self-harm/intent",
  "self-harm/instructions",
  "sexual",
  "violence",
  "violence/graphic",
]);

/** One moderation input: its text and whether it carried an image. */
interface ModerationInput {
  text: string;
  hasImage: boolean;
}

function parseInputs(input: unknown): ModerationInput[] {
  if (typeof input === "string") return [{ text: input, hasImage: false }];
  if (Array.isArray(input) && input.every((x) => typeof x === "string")) {
    return input.map((text: string) => ({ text, hasImage: false }));
  }
  if (Array.isArray(input) && input.every(isJsonObject)) {
    const texts = input
      .filter((p) => p.type === "text" && typeof p.text === "string")
      .map((p) => String(p.text));
    return [{ text: texts.join("\n"), hasImage: input.some((p) => p.type === "image_url") }];
  }
  throw invalidRequest(
    "Invalid value for 'input': expected a string, an array of strings, or content parts.",
    "input",
  );
}

/** True when `text` would be flagged by the simulator (word "attack", `[sim:flag]`, a flag word). */
export function isFlaggedText(text: string, flagWords: readonly string[] = []): boolean {
  if (/\battack/i.test(text) || text.includes("[sim:flag]")) return true;
  const lower = text.toLowerCase();
  return flagWords.some((word) => word.length > 0 && lower.includes(word.toLowerCase()));
}

/** The deterministic moderation result for one input. */
export function moderate(input: ModerationInput, flagWords: readonly string[] = []): Record<string, unknown> {
  const flagged = isFlaggedText(input.text, flagWords);
  const categories: Record<string, boolean> = {};
  const scores: Record<string, number> = {};
  const applied: Record<string, string[]> = {};
  for (const cat of MODERATION_CATEGORIES) {
    const hit = flagged && cat === "violence";
    categories[cat] = hit;
    scores[cat] = hit ? 0.9 : (fnv1a(`${cat}:${input.text}`) % 1000) / 1_000_000;
    applied[cat] = input.hasImage && IMAGE_CATEGORIES.has(cat) ? ["text", "image"] : ["text"];
  }
  return { flagged, categories, category_scores: scores, category_applied_input_types: applied };
}

/** What the directives in a request's inputs ask of this answer. */
interface ModerationScript {
  delayMs: number;
  failStatus: number | null;
  reply: "not_json" | "no_results" | null;
}

/** Reads `[sim:mod_*=…]` directives from every input text (later ones win). */
function scriptOf(inputs: readonly ModerationInput[]): ModerationScript {
  const script: ModerationScript = { delayMs: 0, failStatus: null, reply: null };
  for (const { text } of inputs) {
    for (const m of text.matchAll(/\[sim:(mod_[a-z_]+)=([^\]\s]+)\]/g)) {
      const [, key, value = ""] = m;
      if (key === "mod_delay_ms" && /^\d{1,6}$/.test(value)) script.delayMs = Number(value);
      const status = /^status:(\d{3})$/.exec(value)?.[1];
      if (key === "mod_fail" && status && Number(status) >= 400) script.failStatus = Number(status);
      if (key === "mod_reply" && (value === "not_json" || value === "no_results")) script.reply = value;
    }
  }
  return script;
}

/** Handles one `POST /v1/moderations` request end to end (never throws). */
export async function handleModerations(
  state: SimState,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const { body, record, modelStartMs, finish } = await receivePost(
    state,
    req,
    "moderations",
    "/v1/moderations",
  );
  const tracker = trackDisconnect(res, record, state.recorder);
  try {
    if (!body) throw invalidRequest("We could not parse the JSON body of your request.");
    const inputs = parseInputs(body.input);
    record.inputItemCount = inputs.length;
    record.contextItemCount = inputs.length;
    const script = scriptOf(inputs);
    await waitUntil(modelStartMs, state.moderation.latencyMs + script.delayMs, tracker.signal);
    if (tracker.signal.aborted) return finish(null, "client went away ");
    if (script.failStatus !== null) {
      throw new SimError(script.failStatus, "server_error", "Simulated moderation failure.", "server_error");
    }
    if (script.reply === "not_json") {
      res.writeHead(200, { ...baseHeaders(), "content-type": "text/html" });
      res.end("<html><body>upstream proxy error</body></html>");
      return finish(200, "not_json ");
    }
    const results = inputs.map((input) => moderate(input, state.moderation.flagWords));
    sendJson(res, 200, {
      id: newId("modr-", 12),
      model: typeof body.model === "string" ? body.model : "omni-moderation-latest",
      results: script.reply === "no_results" ? results.slice(1) : results,
    });
    finish(200);
  } catch (e) {
    const err = toSimError(e);
    sendError(res, err);
    finish(err.status);
  }
}
