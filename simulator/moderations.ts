/**
 * `POST /v1/moderations` (spec §6): string | string[] | multimodal parts array, one result per
 * string in order (a parts array is one input). Deterministic: `violence` is flagged (score
 * 0.9) when the text contains the word "attack" or the marker `[sim:flag]`; otherwise every
 * category is false with small hash-derived scores (< 0.001).
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { invalidRequest, toSimError } from "./errors.ts";
import { parseJsonObject, readBody, sendError, sendJson } from "./http-util.ts";
import { newId } from "./ids.ts";
import { fnv1a, isJsonObject } from "./json.ts";
import type { SimState } from "./state.ts";

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

/** True when `text` would be flagged by the simulator (word "attack" or `[sim:flag]`). */
export function isFlaggedText(text: string): boolean {
  return /\battack/i.test(text) || text.includes("[sim:flag]");
}

/** The deterministic moderation result for one input. */
export function moderate(input: ModerationInput): Record<string, unknown> {
  const flagged = isFlaggedText(input.text);
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

/** Handles one `POST /v1/moderations` request end to end (never throws). */
export async function handleModerations(
  state: SimState,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const raw = await readBody(req);
  const body = parseJsonObject(raw);
  const record = state.recorder.begin("moderations", "/v1/moderations", raw, body);
  try {
    if (!body) throw invalidRequest("We could not parse the JSON body of your request.");
    const inputs = parseInputs(body.input);
    record.inputItemCount = inputs.length;
    record.contextItemCount = inputs.length;
    sendJson(res, 200, {
      id: newId("modr-", 12),
      model: typeof body.model === "string" ? body.model : "omni-moderation-latest",
      results: inputs.map(moderate),
    });
    record.status = 200;
  } catch (e) {
    const err = toSimError(e);
    sendError(res, err);
    record.status = err.status;
  }
  state.recorder.changed();
  state.log(`POST /v1/moderations → ${record.status}`);
}
