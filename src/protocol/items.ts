/**
 * Input items of the Responses API: zod schemas and their typed values.
 * Owns item validation at the trust boundary. Known item types are checked field by field so a
 * bad field yields an error naming it (`input[3].call_id`); the other item types OpenAI accepts
 * (hosted-tool calls, custom tool calls…) pass through as opaque objects with a `type`; any other
 * `type` is refused as OpenAI refuses it (400 `invalid_value`, param `input[i]`).
 * Invariant: types are looked up in a `Map`/`Set`, never as keys of an object literal, so a type
 * named after an `Object.prototype` member (`constructor`, `__proto__`, `toString`) is just an
 * unknown type.
 * Source: https://platform.openai.com/docs/api-reference/responses/create (input items).
 */
import { z } from "zod";
import { isRecord } from "./json.ts";
import { openAIIssue } from "./openai-issue.ts";

const role = z.enum(["user", "assistant", "system", "developer"]);

/** A content part of a message: input_text, input_image, input_file, output_text, refusal… */
const contentPart = z.looseObject({ type: z.string().min(1) });

/** `message` item (the `type` may be omitted by clients, as in EasyInputMessage). */
export const messageItem = z.looseObject({
  type: z.literal("message"),
  id: z.string().min(1).optional(),
  role,
  content: z.union([z.string(), z.array(contentPart)]),
});

/** `function_call` item: a tool call the model made. */
export const functionCallItem = z.looseObject({
  type: z.literal("function_call"),
  id: z.string().min(1).optional(),
  call_id: z.string().min(1),
  name: z.string().min(1),
  arguments: z.string(),
});

/** `function_call_output` item: the client's tool result, paired by `call_id`. */
export const functionCallOutputItem = z.looseObject({
  type: z.literal("function_call_output"),
  id: z.string().min(1).optional(),
  call_id: z.string().min(1),
  output: z.union([z.string(), z.array(contentPart)]),
});

/** `reasoning` item, carried through history unchanged (encrypted content included). */
export const reasoningItem = z.looseObject({
  type: z.literal("reasoning"),
  id: z.string().min(1).optional(),
  summary: z.array(z.looseObject({ type: z.string(), text: z.string() })).default([]),
});

const otherItem = z.looseObject({ type: z.string().min(1), id: z.string().min(1).optional() });

/**
 * `item_reference`: an item stored earlier, by id. The session resolves it to the item it holds
 * before anything else reads the input (src/resend/item-references.ts); it is never stored or
 * sent upstream as a reference.
 */
const itemReference = z.looseObject({ type: z.literal("item_reference"), id: z.string().min(1) });

export type MessageItem = z.infer<typeof messageItem>;
export type FunctionCallItem = z.infer<typeof functionCallItem>;
export type FunctionCallOutputItem = z.infer<typeof functionCallOutputItem>;
export type ReasoningItem = z.infer<typeof reasoningItem>;
/** An item of another type (hosted tools, custom tools…), kept as sent. */
export type OtherItem = z.infer<typeof otherItem>;

/** Any validated item: what the conversation store keeps and the upstream receives. */
export type Item = MessageItem | FunctionCallItem | FunctionCallOutputItem | ReasoningItem | OtherItem;

/** An item after Deltagate assigned it an id (every stored item has one). */
export type StoredItem = Item & { id: string };

const schemaByType = new Map<string, z.ZodType<Item>>([
  ["message", messageItem],
  ["function_call", functionCallItem],
  ["function_call_output", functionCallOutputItem],
  ["reasoning", reasoningItem],
  ["item_reference", itemReference],
]);

/**
 * The input item types OpenAI accepts: the `type`s of `ResponseInputItem` in the `openai` SDK this repository pins
 * (openai-node 7.59.0, generated from OpenAI's API specification).
 * Source: https://platform.openai.com/docs/api-reference/responses/create#responses_create-input
 */
export const INPUT_ITEM_TYPES: ReadonlySet<string> = new Set([
  "additional_tools",
  "apply_patch_call",
  "apply_patch_call_output",
  "code_interpreter_call",
  "compaction",
  "compaction_trigger",
  "computer_call",
  "computer_call_output",
  "configuration_update",
  "custom_tool_call",
  "custom_tool_call_output",
  "file_search_call",
  "function_call",
  "function_call_output",
  "image_generation_call",
  "item_reference",
  "local_shell_call",
  "local_shell_call_output",
  "mcp_approval_request",
  "mcp_approval_response",
  "mcp_call",
  "mcp_list_tools",
  "message",
  "program",
  "program_output",
  "reasoning",
  "shell_call",
  "shell_call_output",
  "tool_search_call",
  "tool_search_output",
  "web_search_call",
]);

/** Longest `type` quoted back in an error message. */
const MAX_QUOTED_TYPE = 64;

/** OpenAI's message for an unsupported enum value: `Invalid value: 'x'. Supported values are: …`. */
function unsupportedType(type: string): string {
  const quoted = type.length > MAX_QUOTED_TYPE ? `${type.slice(0, MAX_QUOTED_TYPE)}…` : type;
  const values = [...INPUT_ITEM_TYPES].map((t) => `'${t}'`);
  const last = values.pop();
  return `Invalid value: '${quoted}'. Supported values are: ${values.join(", ")}, and ${last}.`;
}

/**
 * The schema for one input item: adds `type:"message"` to role-only items, then validates by
 * type (an `item_reference` needs its `id`).
 */
export const inputItem: z.ZodType<Item> = z.preprocess(
  (value) => {
    if (isRecord(value) && !("type" in value) && "role" in value) {
      return { ...value, type: "message" };
    }
    return value;
  },
  z.looseObject({ type: z.string().min(1) }).transform((value, ctx): Item => {
    if (!INPUT_ITEM_TYPES.has(value.type)) {
      ctx.addIssue(openAIIssue(unsupportedType(value.type), "invalid_value"));
      return z.NEVER;
    }
    const schema = schemaByType.get(value.type) ?? otherItem;
    const parsed = schema.safeParse(value);
    if (!parsed.success) {
      for (const issue of parsed.error.issues) ctx.addIssue({ ...issue, path: issue.path } as never);
      return z.NEVER;
    }
    return parsed.data;
  }),
);
