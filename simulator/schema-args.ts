/**
 * Generates function-call arguments that satisfy a tool's JSON schema, with sensible values
 * chosen by property name (shell command for `command`/`cmd`, `README.md` for paths, the
 * user's text for `query`). Supports the JSON-schema subset tools use in practice: `type`
 * (also as an array), `enum`, `const`, `properties`/`required`, `items`, `anyOf`/`oneOf`,
 * `minimum`/`maximum`, `minItems`.
 */
import { isJsonObject, type JsonObject } from "./json.ts";

/** Values the generator substitutes for well-known property names. */
export interface ArgHints {
  /** Shell command string (from a backticked command in the user message, or a default). */
  command: string;
  /** The user's text without directives. */
  userText: string;
}

/** Objects with at most this many properties get all of them filled, larger ones only `required`. */
const SMALL_SCHEMA_PROPERTIES = 4;

function schemaType(schema: JsonObject): string | undefined {
  const t = schema.type;
  if (typeof t === "string") return t;
  if (Array.isArray(t)) return t.find((x): x is string => typeof x === "string" && x !== "null") ?? "null";
  if (isJsonObject(schema.properties)) return "object";
  if (schema.items !== undefined) return "array";
  return undefined;
}

function stringFor(name: string, hints: ArgHints): string {
  const n = name.toLowerCase();
  if (n === "command" || n === "cmd" || n === "script") return hints.command;
  if (n === "workdir" || n === "cwd" || n === "dir" || n === "directory") return ".";
  if (n.includes("path") || n.includes("file")) return "README.md";
  if (n === "query" || n === "q" || n === "prompt" || n === "question" || n === "text" || n === "input") {
    return hints.userText || "sim";
  }
  return "sim";
}

function numberFor(name: string, schema: JsonObject): number {
  const n = name.toLowerCase();
  let value = n.includes("timeout") || n.endsWith("_ms") ? 10_000 : 1;
  if (typeof schema.minimum === "number" && value < schema.minimum) value = schema.minimum;
  if (typeof schema.exclusiveMinimum === "number" && value <= schema.exclusiveMinimum) {
    value = schema.exclusiveMinimum + 1;
  }
  if (typeof schema.maximum === "number" && value > schema.maximum) value = schema.maximum;
  return schemaType(schema) === "integer" ? Math.ceil(value) : value;
}

/**
 * Returns a value matching `schema` for a property called `name` (use "" at the top level).
 * Unknown or missing schemas yield "sim".
 */
export function valueForSchema(schema: unknown, name: string, hints: ArgHints, depth = 0): unknown {
  if (!isJsonObject(schema) || depth > 8) return "sim";
  if ("const" in schema) return schema.const;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  const variants = Array.isArray(schema.anyOf)
    ? schema.anyOf
    : Array.isArray(schema.oneOf)
      ? schema.oneOf
      : null;
  if (variants && variants.length > 0) {
    const firstNonNull = variants.find((v) => !(isJsonObject(v) && v.type === "null")) ?? variants[0];
    return valueForSchema(firstNonNull, name, hints, depth + 1);
  }
  switch (schemaType(schema)) {
    case "string":
      return stringFor(name, hints);
    case "number":
    case "integer":
      return numberFor(name, schema);
    case "boolean":
      return false;
    case "null":
      return null;
    case "array":
      return arrayFor(schema, name, hints, depth);
    case "object":
      return objectFor(schema, hints, depth);
    default:
      return "sim";
  }
}

function arrayFor(schema: JsonObject, name: string, hints: ArgHints, depth: number): unknown[] {
  const items = isJsonObject(schema.items) ? schema.items : {};
  const lower = name.toLowerCase();
  if ((lower === "command" || lower === "cmd" || lower === "argv") && schemaType(items) === "string") {
    return ["bash", "-lc", hints.command];
  }
  const count = Math.max(1, typeof schema.minItems === "number" ? schema.minItems : 1);
  return Array.from({ length: count }, () => valueForSchema(items, name, hints, depth + 1));
}

function objectFor(schema: JsonObject, hints: ArgHints, depth: number): JsonObject {
  const props = isJsonObject(schema.properties) ? schema.properties : {};
  const names = Object.keys(props);
  const required = Array.isArray(schema.required)
    ? schema.required.filter((r): r is string => typeof r === "string")
    : [];
  const chosen = names.length <= SMALL_SCHEMA_PROPERTIES ? names : names.filter((n) => required.includes(n));
  for (const r of required) if (!chosen.includes(r)) chosen.push(r);
  const out: JsonObject = {};
  for (const key of chosen) out[key] = valueForSchema(props[key], key, hints, depth + 1);
  return out;
}

/** JSON arguments string for a tool whose parameters schema is `parameters` (object expected). */
export function argumentsForTool(parameters: unknown, hints: ArgHints): string {
  const value = valueForSchema(isJsonObject(parameters) ? parameters : { type: "object" }, "", hints);
  return JSON.stringify(isJsonObject(value) ? value : {});
}
