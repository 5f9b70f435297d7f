/**
 * JSON value types of the wire protocol, for fields Deltagate forwards or stores without
 * interpreting them, and the one object guard. Owns the one `Json` definition and `isRecord`,
 * which every module uses to tell a JSON object from an array, `null` or a scalar before reading
 * its fields.
 */

/** A JSON value. */
export type Json = string | number | boolean | null | Json[] | JsonObject;

/** A JSON object. */
export type JsonObject = { [key: string]: Json };

/**
 * True for an object whose fields may be read: not null, not an array. A `Json` narrows to a
 * `JsonObject`; anything else to an object whose fields are not checked yet.
 */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
