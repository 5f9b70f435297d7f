/**
 * The kinds of environment setting the configuration schema (schema.ts) is made of — integer,
 * boolean, text, secret, URL, one of, list, JSON — each with its documentation (type, range,
 * default) and its parser, so a setting's declaration is all there is to it.
 * Invariants: a parser gets undefined for an unset or empty variable and returns the default;
 * its errors name the variable, never the value (it may be a secret); booleans are read one way
 * for every setting.
 */
import { z } from "zod";

/** One environment setting: how it is documented and how it is parsed. */
export interface Setting<T> {
  /** Its type as the docs name it (`integer (ms)`, `secret`, `JSON`…). */
  readonly type: string;
  /** Accepted values beyond the type (`0–5`, `≥ 1`, `≥ 32 characters`), or null. */
  readonly range: string | null;
  /** The default as the docs show it, or null (unset: the feature is off or the value empty). */
  readonly defaultText: string | null;
  /** One line: what it does. */
  readonly description: string;
  /** A secret: set it with `wrangler secret put`, never in wrangler.toml; redacted from logs. */
  readonly secret: boolean;
  /**
   * The value of the variable `name`; `raw` is undefined when it is unset or empty.
   * @throws {Error} naming the variable (never quoting the value) when it is invalid.
   */
  readonly parse: (raw: string | undefined, name: string) => T;
}

/** A deprecated setting: still read, with what replaces it. */
export interface DeprecatedSetting<T> extends Setting<T> {
  /** What an operator sets instead. */
  readonly replacedBy: string;
  /** The release that stops reading it. */
  readonly until: string;
}

/** `schema`'s value of `value`, or an error naming the variable with zod's first complaint. */
export function check<T>(name: string, schema: z.ZodType<T>, value: unknown): T {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  throw new Error(`${name}: ${parsed.error.issues[0]?.message ?? "invalid"}`);
}

/** What every kind takes for the docs. */
export type Doc = { description: string; defaultText?: string };

/** An integer in [min, max] (max: none when omitted), `unit` for the docs. */
export function integer(
  description: string,
  o: { default: number; min: number; max?: number; unit?: string },
): Setting<number> {
  const schema = z.coerce
    .number()
    .int()
    .min(o.min)
    .max(o.max ?? Number.MAX_SAFE_INTEGER);
  return {
    type: o.unit ? `integer (${o.unit})` : "integer",
    range: o.max === undefined ? `≥ ${o.min}` : `${o.min}–${o.max}`,
    defaultText: String(o.default),
    description,
    secret: false,
    parse: (raw, name) => check(name, schema, raw ?? o.default),
  };
}

const TRUE_WORDS = ["1", "true", "on", "yes"];
const FALSE_WORDS = ["0", "false", "off", "no"];

/**
 * A comma-separated list of origins, each exactly `scheme://host[:port]` (as `URL.origin` writes
 * it). @throws {Error} naming the variable and the entry that is not an origin.
 */
export function originList(value: string, name: string): ReadonlySet<string> {
  const origins = new Set<string>();
  for (const entry of value
    .split(",")
    .map((e) => e.trim())
    .filter((e) => e.length > 0)) {
    let origin: string | null = null;
    try {
      origin = new URL(entry).origin;
    } catch {
      origin = null;
    }
    if (origin !== entry) throw new Error(`${name}: '${entry}' is not an origin (scheme://host[:port])`);
    origins.add(entry);
  }
  return origins;
}

/** The boolean `raw` spells (`true`/`false`, also `1`/`0`, `on`/`off`, `yes`/`no`), or null. */
export function booleanWord(raw: string): boolean | null {
  const word = raw.trim().toLowerCase();
  if (TRUE_WORDS.includes(word)) return true;
  if (FALSE_WORDS.includes(word)) return false;
  return null;
}

/** `true`/`1`/`on`/`yes` or `false`/`0`/`off`/`no` (any case); anything else is refused. */
export function boolean(description: string, fallback: boolean): Setting<boolean> {
  return {
    type: "boolean",
    range: null,
    defaultText: String(fallback),
    description,
    secret: false,
    parse: (raw, name) => {
      if (raw === undefined) return fallback;
      const word = booleanWord(raw);
      if (word !== null) return word;
      throw new Error(`${name}: expected true or false (also 1/0, on/off, yes/no)`);
    },
  };
}

/** Text, or `fallback` when unset. */
export function text<T extends string | null>(
  doc: Doc & { type?: string },
  fallback: T,
): Setting<string | T> {
  return {
    type: doc.type ?? "text",
    range: null,
    defaultText: doc.defaultText ?? fallback,
    description: doc.description,
    secret: false,
    parse: (raw) => raw ?? fallback,
  };
}

/** A secret of at least `minChars` characters, or null when unset. */
export function secret(description: string, minChars?: number): Setting<string | null> {
  return {
    type: "secret",
    range: minChars === undefined ? null : `≥ ${minChars} characters`,
    defaultText: null,
    description,
    secret: true,
    parse: (raw, name) => {
      if (raw === undefined) return null;
      if (minChars !== undefined && raw.length < minChars) {
        throw new Error(`${name} must be at least ${minChars} characters`);
      }
      return raw;
    },
  };
}

/** An http(s) URL without its trailing slashes; `fallback` (or null) when unset. */
export function url<T extends string | null>(doc: Doc, fallback: T): Setting<string | T> {
  const schema = z.url({ protocol: /^https?$/ });
  return {
    type: "URL",
    range: "http(s)",
    defaultText: doc.defaultText ?? fallback,
    description: doc.description,
    secret: false,
    parse: (raw, name) => (raw === undefined ? fallback : check(name, schema, raw).replace(/\/+$/, "")),
  };
}

/** One of `values`; `fallback` (or null: decided elsewhere) when unset. */
export function oneOf<const V extends readonly [string, ...string[]], T extends V[number] | null>(
  values: V,
  doc: Doc,
  fallback: T,
): Setting<V[number] | T> {
  const schema = z.enum(values);
  return {
    type: "one of",
    range: values.map((v) => `\`${v}\``).join(", "),
    defaultText: doc.defaultText ?? fallback,
    description: doc.description,
    secret: false,
    parse: (raw, name) => (raw === undefined ? fallback : check(name, schema, raw.trim())),
  };
}

/** A comma-separated list (entries trimmed, empty ones dropped). */
export function list(doc: Doc & { type?: string; secret?: boolean }): Setting<readonly string[]> {
  return {
    type: doc.type ?? "comma-separated list",
    range: null,
    defaultText: doc.defaultText ?? null,
    description: doc.description,
    secret: doc.secret ?? false,
    parse: (raw) =>
      (raw ?? "")
        .split(",")
        .map((entry) => entry.trim())
        .filter((entry) => entry.length > 0),
  };
}

/** JSON read by `parse` (which names the variable in its errors); `fallback` when unset. */
export function json<T, F>(doc: Doc, parse: (raw: string, name: string) => T, fallback: F): Setting<T | F> {
  return {
    type: "JSON",
    range: null,
    defaultText: doc.defaultText ?? null,
    description: doc.description,
    secret: false,
    parse: (raw, name) => (raw === undefined ? fallback : parse(raw, name)),
  };
}
