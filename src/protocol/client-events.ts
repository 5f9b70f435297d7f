/**
 * Client → server WebSocket events (https://developers.openai.com/api/docs/guides/websocket-mode): parsing of one text frame into a typed event.
 * Owns the frame boundary: every frame is JSON-parsed and zod-validated here, and every failure
 * becomes an `ApiError` naming the offending field, so the socket handler never sees raw input.
 */
import { z } from "zod";
import { type CreateRequest, createFrame } from "./create-request.ts";
import { type ApiError, invalidRequest } from "./errors.ts";
import { parseClientJson } from "./json-limits.ts";
import { openAIErrorOf } from "./openai-issue.ts";

/** The client events Deltagate understands. */
export type ClientEvent =
  | { type: "response.create"; request: CreateRequest }
  | { type: "response.steer"; previous_response_id: string | null }
  | { type: "response.processed" }
  | { type: typeof RESUME_EVENT; response_id: string; starting_after: number; stream_id: string | null };

/**
 * Deltagate's protocol extension: resume a response's event stream on this socket, from after the
 * client's last seen `sequence_number` (replay of the missed events, then live).
 */
export const RESUME_EVENT = "deltagate.response.resume";
const resume = z.looseObject({
  response_id: z.string().min(1),
  starting_after: z.number().int().min(-1).default(-1),
  stream_id: z.string().min(1).nullish(),
});

const envelope = z.looseObject({ type: z.string() });
const steer = z.looseObject({ previous_response_id: z.string().nullish() });

/** Converts a zod error into OpenAI's 400 shape: `param` is the field path (`input[2].call_id`). */
export function zodToApiError(error: z.ZodError): ApiError {
  const issue = error.issues[0];
  if (!issue) return invalidRequest("Invalid request.");
  const { path, leaf } = deepestIssue(issue, []);
  if (leaf.code === "unrecognized_keys") return unknownParameter([...path, leaf.keys[0] ?? ""]);
  const param = formatPath(path);
  const openai = leaf.code === "custom" ? openAIErrorOf(leaf.params) : null;
  if (openai) return invalidRequest(openai.message, param || null, openai.code);
  const message = param ? `Invalid value for '${param}': ${leaf.message}` : leaf.message;
  return invalidRequest(
    message,
    param || null,
    leaf.code === "invalid_type" ? "invalid_type" : "invalid_value",
  );
}

/**
 * A field the schema does not know, as OpenAI refuses it: 400 `unknown_parameter`, "Unknown
 * parameter: 'x'.", `param: "x"` (the path for a nested field: `moderation.policy.x`).
 */
function unknownParameter(path: readonly PropertyKey[]): ApiError {
  const param = formatPath(path);
  return invalidRequest(`Unknown parameter: '${param}'.`, param, "unknown_parameter");
}

/**
 * For a union mismatch (`input` is a string or an item array), reports the branch that got
 * furthest, so the client learns which field of which item is wrong rather than "invalid input".
 */
function deepestIssue(
  issue: z.core.$ZodIssue,
  prefix: readonly PropertyKey[],
): { path: PropertyKey[]; leaf: z.core.$ZodIssue } {
  const path = [...prefix, ...issue.path];
  if (issue.code !== "invalid_union" || issue.errors.length === 0) return { path, leaf: issue };
  let best: { path: PropertyKey[]; leaf: z.core.$ZodIssue } | null = null;
  for (const branch of issue.errors) {
    const first = branch[0];
    if (!first) continue;
    const candidate = deepestIssue(first, path);
    if (!best || candidate.path.length > best.path.length) best = candidate;
  }
  return best ?? { path, leaf: issue };
}

function formatPath(path: readonly PropertyKey[]): string {
  let out = "";
  for (const part of path) {
    if (typeof part === "number") out += `[${part}]`;
    else out += out ? `.${String(part)}` : String(part);
  }
  return out;
}

/**
 * Parses one WebSocket frame.
 * @param frame the raw message from `webSocketMessage` (text, or binary as ArrayBuffer).
 * @returns the typed event.
 * @throws {ApiError} 400 for binary frames, invalid JSON, JSON nested deeper than
 *   `MAX_JSON_DEPTH`, a missing/unknown `type`, or invalid fields.
 */
export function parseClientFrame(frame: string | ArrayBuffer): ClientEvent {
  if (typeof frame !== "string") {
    throw invalidRequest("Binary frames are not supported; send JSON text frames.", null, "invalid_frame");
  }
  const value = parseClientJson(frame, "frame");
  const head = envelope.safeParse(value);
  if (!head.success) {
    throw invalidRequest("Each frame must be a JSON object with a string 'type'.", "type", "invalid_value");
  }
  switch (head.data.type) {
    case "response.create": {
      const parsed = createFrame.safeParse(value);
      if (!parsed.success) throw zodToApiError(parsed.error);
      const { type: _type, ...request } = parsed.data;
      return { type: "response.create", request };
    }
    case "response.steer": {
      const parsed = steer.safeParse(value);
      return {
        type: "response.steer",
        previous_response_id: parsed.success ? (parsed.data.previous_response_id ?? null) : null,
      };
    }
    case "response.processed":
      return { type: "response.processed" };
    case RESUME_EVENT: {
      const parsed = resume.safeParse(value);
      if (!parsed.success) throw zodToApiError(parsed.error);
      return { type: RESUME_EVENT, ...parsed.data, stream_id: parsed.data.stream_id ?? null };
    }
    default:
      throw invalidRequest(
        `Unsupported event type '${head.data.type}'. Supported: response.create, response.steer, ${RESUME_EVENT}.`,
        "type",
        "unknown_event_type",
      );
  }
}
