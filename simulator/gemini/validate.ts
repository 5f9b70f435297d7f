/**
 * Request validation of the simulator's Gemini `generateContent` / `streamGenerateContent`, with
 * Google's wording where it is known: `contents` required; roles `user` / `model`; every part
 * with exactly one kind of data; consecutive contents of the same role form one turn (Google's
 * SDK chat sends one model content per streamed chunk); a model turn's `functionCall` parts
 * answered by as many `functionResponse` parts in the user turn right after it, names matching
 * and ids matching where the calls had ids; `thinkingLevel` and `thinkingBudget` not both; and
 * the thought signatures: an altered one is refused everywhere, and for a Gemini 3 model the first
 * `functionCall` part of every step of the current turn (the model turns after the last user turn
 * that is not only function responses) must carry its signature — the 400 Gemini 3 answers a
 * client that dropped it.
 * Source: https://ai.google.dev/api/generate-content, https://ai.google.dev/api/caching#Content,
 * https://ai.google.dev/gemini-api/docs/function-calling,
 * https://ai.google.dev/gemini-api/docs/thought-signatures ("Validation"),
 * https://ai.google.dev/gemini-api/docs/thinking.
 */
import { isJsonObject, type JsonObject } from "../json.ts";
import { invalidArgument } from "./errors.ts";
import type { ThoughtSigner } from "./signatures.ts";

const DATA_FIELDS = [
  "text",
  "inlineData",
  "fileData",
  "functionCall",
  "functionResponse",
  "executableCode",
  "codeExecutionResult",
];
const LEVELS = new Set(["minimal", "low", "medium", "high"]);
const MODES = new Set(["AUTO", "ANY", "NONE", "VALIDATED"]);

/** One turn: consecutive contents of one role, with where each part came from. */
export interface Turn {
  role: "user" | "model";
  parts: Array<{ part: JsonObject; content: number }>;
}

/** True for a model that validates missing signatures (Gemini 3 and later). */
export function enforcesSignatures(model: string): boolean {
  return !/^gemini-(1|2)[.-]/.test(model);
}

/** The contents of a valid body grouped into turns. */
export function turnsOf(body: JsonObject): Turn[] {
  const turns: Turn[] = [];
  (body.contents as JsonObject[]).forEach((content, index) => {
    const role = content.role === "model" ? "model" : "user";
    const parts = (content.parts as JsonObject[]).map((part) => ({ part, content: index }));
    const last = turns.at(-1);
    if (last?.role === role) last.parts.push(...parts);
    else turns.push({ role, parts });
  });
  return turns;
}

function validateConfig(body: JsonObject): void {
  const generation = body.generationConfig;
  if (generation !== undefined && !isJsonObject(generation))
    throw invalidArgument("Invalid generationConfig.");
  const thinking = isJsonObject(generation) ? generation.thinkingConfig : undefined;
  if (isJsonObject(thinking)) {
    if (thinking.thinkingLevel !== undefined && thinking.thinkingBudget !== undefined) {
      throw invalidArgument("You can only set only one of thinking budget and thinking level.");
    }
    const level = thinking.thinkingLevel;
    if (level !== undefined && (typeof level !== "string" || !LEVELS.has(level.toLowerCase()))) {
      throw invalidArgument(
        `Invalid value at 'generation_config.thinking_config.thinking_level' (${String(level)})`,
      );
    }
  }
  const temperature = isJsonObject(generation) ? generation.temperature : undefined;
  if (temperature !== undefined && (typeof temperature !== "number" || temperature < 0 || temperature > 2)) {
    throw invalidArgument("* GenerateContentRequest.generation_config.temperature: must be in [0, 2]");
  }
  const max = isJsonObject(generation) ? generation.maxOutputTokens : undefined;
  if (max !== undefined && (typeof max !== "number" || !Number.isInteger(max) || max < 1)) {
    throw invalidArgument("* GenerateContentRequest.generation_config.max_output_tokens: must be positive");
  }
  const tools = body.tools;
  if (tools !== undefined && !Array.isArray(tools)) throw invalidArgument("Invalid tools.");
  for (const tool of Array.isArray(tools) ? tools : []) {
    const declarations = isJsonObject(tool) ? tool.functionDeclarations : undefined;
    for (const declaration of Array.isArray(declarations) ? declarations : []) {
      const name = isJsonObject(declaration) ? declaration.name : undefined;
      if (typeof name !== "string" || !/^[A-Za-z_][A-Za-z0-9_.:-]{0,63}$/.test(name)) {
        throw invalidArgument(
          `* GenerateContentRequest.tools[0].function_declarations: Invalid function name. Must start with a letter or an underscore. Must be a-z, A-Z, 0-9, or contain underscores, dots, colons and dashes, with a maximum length of 64.`,
        );
      }
      if (
        isJsonObject(declaration) &&
        declaration.parameters !== undefined &&
        declaration.parametersJsonSchema !== undefined
      ) {
        throw invalidArgument("parameters and parameters_json_schema are mutually exclusive.");
      }
    }
  }
  const calling = isJsonObject(body.toolConfig) ? body.toolConfig.functionCallingConfig : undefined;
  if (isJsonObject(calling) && calling.mode !== undefined && !MODES.has(String(calling.mode))) {
    throw invalidArgument(
      `Invalid value at 'tool_config.function_calling_config.mode' (${String(calling.mode)})`,
    );
  }
}

function validateParts(contents: unknown[]): void {
  contents.forEach((content, c) => {
    if (!isJsonObject(content))
      throw invalidArgument(`* GenerateContentRequest.contents[${c}]: must be an object`);
    if (content.role !== undefined && content.role !== "user" && content.role !== "model") {
      throw invalidArgument("Please use a valid role: user, model.");
    }
    const parts = content.parts;
    if (!Array.isArray(parts) || parts.length === 0) {
      throw invalidArgument(
        `* GenerateContentRequest.contents[${c}].parts: contents.parts must not be empty.`,
      );
    }
    parts.forEach((part, p) => {
      const kinds = isJsonObject(part) ? DATA_FIELDS.filter((field) => part[field] !== undefined) : [];
      if (kinds.length !== 1) {
        throw invalidArgument(
          `* GenerateContentRequest.contents[${c}].parts[${p}].data: required oneof field 'data' must have one initialized field`,
        );
      }
      const call = (part as JsonObject).functionCall;
      if (call !== undefined && (!isJsonObject(call) || typeof call.name !== "string" || call.name === "")) {
        throw invalidArgument(
          `* GenerateContentRequest.contents[${c}].parts[${p}].function_call.name: Name cannot be empty.`,
        );
      }
      const response = (part as JsonObject).functionResponse;
      if (response !== undefined) {
        if (!isJsonObject(response) || typeof response.name !== "string" || response.name === "") {
          throw invalidArgument(
            `* GenerateContentRequest.contents[${c}].parts[${p}].function_response.name: Name cannot be empty.`,
          );
        }
        if (!isJsonObject(response.response)) {
          throw invalidArgument(
            `* GenerateContentRequest.contents[${c}].parts[${p}].function_response.response: must be an object`,
          );
        }
      }
    });
  });
}

function validatePairing(turns: Turn[]): void {
  turns.forEach((turn, t) => {
    const responses = turn.parts.filter(({ part }) => isJsonObject(part.functionResponse));
    const calls =
      turns[t - 1]?.role === "model"
        ? (turns[t - 1]?.parts ?? []).filter(({ part }) => isJsonObject(part.functionCall))
        : [];
    if (turn.role === "model") return;
    if (responses.length === 0 && calls.length === 0) return;
    if (calls.length === 0) {
      throw invalidArgument(
        "Please ensure that function response turn comes immediately after a function call turn.",
      );
    }
    if (responses.length !== calls.length) {
      throw invalidArgument(
        "Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn.",
      );
    }
    const callNames = calls.map(({ part }) => String((part.functionCall as JsonObject).name)).sort();
    const answerNames = responses
      .map(({ part }) => String((part.functionResponse as JsonObject).name))
      .sort();
    if (callNames.join("\n") !== answerNames.join("\n")) {
      throw invalidArgument(
        "Please ensure that the function response names match the function call names of the function call turn.",
      );
    }
    const callIds = calls
      .map(({ part }) => (part.functionCall as JsonObject).id)
      .filter((id) => typeof id === "string");
    if (callIds.length > 0) {
      const answerIds = responses
        .map(({ part }) => String((part.functionResponse as JsonObject).id ?? ""))
        .sort();
      if ((callIds as string[]).sort().join("\n") !== answerIds.join("\n")) {
        throw invalidArgument(
          "Please ensure that the function response ids match the function call ids of the function call turn.",
        );
      }
    }
  });
}

function validateSignatures(turns: Turn[], model: string, signer: ThoughtSigner): void {
  for (const turn of turns) {
    for (const { part, content } of turn.parts) {
      const signature = part.thoughtSignature;
      if (signature === undefined) continue;
      const { thoughtSignature: _own, ...unsigned } = part;
      if (typeof signature !== "string" || turn.role !== "model" || !signer.verify(unsigned, signature)) {
        throw invalidArgument(`Corrupted thought signature. Additional data, content ${content}.`);
      }
    }
  }
  if (!enforcesSignatures(model)) return;
  // The current turn: after the last user turn with anything but function responses.
  let start = 0;
  turns.forEach((turn, t) => {
    if (turn.role === "user" && turn.parts.some(({ part }) => part.functionResponse === undefined))
      start = t + 1;
  });
  for (const turn of turns.slice(start)) {
    if (turn.role !== "model") continue;
    const first = turn.parts.find(({ part }) => isJsonObject(part.functionCall));
    if (first && typeof first.part.thoughtSignature !== "string") {
      const name = String((first.part.functionCall as JsonObject).name);
      throw invalidArgument(
        `Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, and missing thought_signature may lead to degraded model performance. Additional data, function call \`default_api:${name}\`, position ${first.content + 1}. Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more details.`,
      );
    }
  }
}

/**
 * Validates a `generateContent` body for `model`.
 * @throws {GoogleError} 400 `INVALID_ARGUMENT` with Google's wording of the first problem found.
 */
export function validateGenerate(body: JsonObject, model: string, signer: ThoughtSigner): Turn[] {
  const contents = body.contents;
  if (!Array.isArray(contents) || contents.length === 0) {
    throw invalidArgument("* GenerateContentRequest.contents: contents is not specified");
  }
  validateParts(contents);
  validateConfig(body);
  const turns = turnsOf(body);
  validatePairing(turns);
  validateSignatures(turns, model, signer);
  return turns;
}
