/**
 * JSON value types of the wire protocol, for fields Deltagate forwards or stores without
 * interpreting them. Owns the one `Json` definition and the object guard every module uses.
 */

/** A JSON value. */
export type Json = string | number | boolean | null | Json[] | { [key: string]: Json };

/** A JSON object whose fields are not interpreted yet. */
export type JsonObject = { [field: string]: unknown };

/** True for a plain JSON object (not null, not an array). */
export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
