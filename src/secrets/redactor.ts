/**
 * Secret redaction: the one place that knows what a secret looks like. Every string that came
 * from an upstream or a request and may reach a client, storage or a log (error messages, error
 * objects of streamed events, stored errors) passes through `SecretRedactor.text`/`json`.
 * Invariant: a configured secret (by value: every upstream key, every tenant key, every tenant's
 * own upstream key a session of this isolate has unsealed, every binding
 * whose name says it is a key, token, secret or password) never survives redaction, nor does a
 * token of a known key shape (OpenAI `sk-…`, Groq `gsk_…`, xAI `xai-…`, Google `AIza…`, Fireworks
 * `fw_…`, Anthropic `sk-ant-…`, Azure 32-hex keys, `Bearer …`, Deltagate's client secrets
 * `ek_…`), whole or masked the way providers echo them (`sk-abc***…xyz`). A documentation
 * placeholder (`Bearer <key>`) is not a credential and stays, so Deltagate's own messages read as
 * written.
 * Sources: https://platform.openai.com/docs/api-reference/authentication (key format),
 * https://learn.microsoft.com/azure/ai-services/openai/reference#authentication (32-hex keys).
 */

/** What replaces a secret. */
export const REDACTED = "[redacted]";

/** Shortest configured value treated as a secret (shorter values would redact ordinary words). */
const MIN_SECRET_LENGTH = 8;

/** Binding names whose values are secrets, whatever the value looks like. */
const SECRET_NAME = /(KEY|TOKEN|SECRET|PASSWORD|CREDENTIAL)S?$/i;

/**
 * Key shapes redacted even when not configured (an upstream may echo a key Deltagate never saw,
 * e.g. one of its own). Masked forms (`*` or `…` runs inside) are matched too.
 */
/**
 * A documentation placeholder such as `<key>` or `<client secret>`: never a credential, so
 * Deltagate's own messages ("Send `Authorization: Bearer <key>`") survive redaction whole.
 */
const PLACEHOLDER = String.raw`<[^<>\n]{1,40}>`;
/** Characters that end a token: whitespace, quotes, separators and the backtick of Markdown code. */
const TOKEN = String.raw`[^\s"'\`,;}]+`;
/** An authentication scheme before a credential (`Authorization: Bearer …`). */
const SCHEME = String.raw`(?:(?:Bearer|Basic|Token)\s+)?`;

const KEY_SHAPES: readonly RegExp[] = [
  new RegExp(String.raw`\bBearer\s+(?!${PLACEHOLDER})${TOKEN}`, "gi"),
  /\b(?:sk|pk|rk)-(?:proj-|ant-|svcacct-|admin-)?[A-Za-z0-9_*.…-]{8,}/g,
  /\b(?:gsk|fw|hf|ghp|gho|xoxb|glpat)_[A-Za-z0-9_*.…-]{8,}/g,
  /\bxai-[A-Za-z0-9_*.…-]{8,}/g,
  // Client secrets (src/auth/client-secret.ts), also inside `openai-insecure-api-key.ek_…` or a URL.
  /\bek_[A-Za-z0-9_*.…-]{16,}/g,
  /\bAIza[A-Za-z0-9_*.…-]{16,}/g,
  /\bdgk_[A-Za-z0-9_.-]{1,64}_[0-9a-f]{12}_[0-9a-f*.…]{8,}/g, // Deltagate's own tenant keys (src/tenancy/api-keys.ts)
  /\b[a-f0-9]{32}\b/g,
  // The whole credential after the name, scheme included, unless it is a placeholder.
  new RegExp(
    String.raw`\b(?:api[-_]?key|access[-_]?token|x-api-key|authorization)(["']?\s*[:=]\s*["']?)(?!${SCHEME}${PLACEHOLDER})${SCHEME}${TOKEN}`,
    "gi",
  ),
];

/** What `SecretRedactor.scanValues` found in a text. */
export interface ValueScan {
  /** The text up to `held`, with every configured value in it replaced by `[redacted]`. */
  text: string;
  /**
   * The text's tail that could be the start of a configured value, whole or cut off by the end of
   * the text (empty when none): a stream holds it back until what follows decides.
   */
  held: string;
}

/** Replaces configured secret values and known key shapes in strings and JSON values. */
export class SecretRedactor {
  /** Longest first, so a secret that contains another is replaced whole. */
  private values: readonly string[];
  /** The values by their first two UTF-16 code units (`first * 65536 + second`), longest first. */
  private byPair = new Map<number, string[]>();
  /** The first code units of the values: ASCII ones as a table (one array read), others in a set. */
  private asciiFirst = new Uint8Array(128);
  private otherFirst = new Set<number>();

  /** @param values secret values; blanks and values shorter than 8 characters are ignored. */
  constructor(values: Iterable<string>) {
    this.values = [];
    this.add(values);
  }

  /**
   * Learns further secret values at run time (a tenant's own upstream key, once its session has
   * unsealed it: src/tenancy/tenant-upstream-key.ts). A value is never forgotten: a key removed
   * from its tenant may still be quoted by a late upstream error.
   */
  add(values: Iterable<string>): void {
    const unique = new Set<string>(this.values);
    for (const value of values) {
      const trimmed = value.trim();
      if (trimmed.length >= MIN_SECRET_LENGTH) unique.add(trimmed);
    }
    if (unique.size === this.values.length) return;
    this.values = [...unique].sort((a, b) => b.length - a.length);
    this.byPair = new Map();
    this.asciiFirst = new Uint8Array(128);
    this.otherFirst = new Set();
    for (const value of this.values) {
      const first = value.charCodeAt(0);
      const pair = first * 65536 + value.charCodeAt(1);
      const list = this.byPair.get(pair);
      if (list) list.push(value);
      else this.byPair.set(pair, [value]);
      if (first < 128) this.asciiFirst[first] = 1;
      else this.otherFirst.add(first);
    }
  }

  /**
   * Replaces every configured value in `text` (by value only: key shapes are not looked for, so
   * model output such as a commit hash or an `sk-` example stays as written) in one pass over its
   * characters: a character that begins no configured value costs one table read, one that does a
   * map lookup of it and the next.
   * @param final true when nothing follows `text` (a stream's end): nothing is held back.
   * @returns the redacted text and, unless `final`, the tail held back because it could begin a
   *   configured value that the next text completes.
   */
  scanValues(text: string, final = false): ValueScan {
    if (this.values.length === 0) return { text, held: "" };
    let out = "";
    let copied = 0;
    let i = 0;
    const length = text.length;
    while (i < length) {
      const code = text.charCodeAt(i);
      if (code < 128 ? this.asciiFirst[code] === 0 : !this.otherFirst.has(code)) {
        i++;
        continue;
      }
      // The last character begins a configured value (each has at least 8): it may go on.
      if (i + 1 === length) {
        if (!final) return { text: out + text.slice(copied, i), held: text.slice(i) };
        break;
      }
      const candidates = this.byPair.get(code * 65536 + text.charCodeAt(i + 1));
      if (candidates === undefined) {
        i++;
        continue;
      }
      const whole = candidates.find((value) => text.startsWith(value, i));
      if (whole !== undefined) {
        out += `${text.slice(copied, i)}${REDACTED}`;
        i += whole.length;
        copied = i;
        continue;
      }
      if (!final) {
        const rest = length - i;
        if (candidates.some((value) => value.length > rest && value.startsWith(text.slice(i)))) {
          return { text: out + text.slice(copied, i), held: text.slice(i) };
        }
      }
      i++;
    }
    return { text: copied === 0 ? text : out + text.slice(copied), held: "" };
  }

  /**
   * A copy of a JSON value with every string (object keys excluded) passed through `scanValues`
   * (final): configured values replaced, key shapes left.
   */
  valuesJson<T>(value: T): T {
    if (this.values.length === 0) return value;
    return this.mapStrings(value, (text) => this.scanValues(text, true).text);
  }

  /**
   * Collects every secret of a Worker environment: each string binding whose name ends in
   * KEY/TOKEN/SECRET/PASSWORD/CREDENTIAL(S), and every key of `DELTAGATE_API_KEYS` (`key:tenant`).
   * @param extra further secret values, whatever their binding is named (e.g. the upstream keys
   *   the routing table reads through `api_key_var`); nulls are skipped.
   */
  static fromEnv(
    env: Readonly<Record<string, unknown>>,
    extra: Iterable<string | null> = [],
  ): SecretRedactor {
    const values: string[] = [];
    for (const value of extra) if (value !== null) values.push(value);
    for (const [name, value] of Object.entries(env)) {
      if (typeof value !== "string") continue;
      if (name === "DELTAGATE_API_KEYS") {
        for (const entry of value.split(",")) {
          const cut = entry.lastIndexOf(":");
          values.push(cut > 0 ? entry.slice(0, cut) : entry);
        }
      } else if (SECRET_NAME.test(name)) {
        values.push(value);
      }
    }
    return new SecretRedactor(values);
  }

  /** `text` with every configured secret and every key-shaped token replaced by `[redacted]`. */
  text(text: string): string {
    let out = text;
    for (const value of this.values) {
      if (out.includes(value)) out = out.split(value).join(REDACTED);
    }
    for (const shape of KEY_SHAPES) {
      out = out.replace(shape, (match, separator: unknown) =>
        typeof separator === "string"
          ? `${match.slice(0, match.indexOf(separator))}${separator}${REDACTED}`
          : REDACTED,
      );
    }
    return out;
  }

  /**
   * A copy of a JSON value with every string (object keys excluded) redacted. Iterative, so a
   * deeply nested value cannot overflow the stack.
   */
  json<T>(value: T): T {
    return this.mapStrings(value, (text) => this.text(text));
  }

  /** A copy of a JSON value with `map` applied to every string (object keys excluded); iterative. */
  private mapStrings<T>(value: T, map: (text: string) => string): T {
    if (typeof value === "string") return map(value) as T;
    if (typeof value !== "object" || value === null) return value;
    const root: unknown = Array.isArray(value) ? [...value] : { ...value };
    const stack: Array<Record<string, unknown> | unknown[]> = [root as Record<string, unknown>];
    for (let node = stack.pop(); node !== undefined; node = stack.pop()) {
      const entries: Array<[string | number, unknown]> = Array.isArray(node)
        ? node.map((child, index) => [index, child])
        : Object.entries(node);
      for (const [key, child] of entries) {
        (node as Record<string | number, unknown>)[key] = copyChild(child, stack, map);
      }
    }
    return root as T;
  }
}

/** A mapped string, or a shallow copy of a container queued on `stack` for its own pass. */
function copyChild(
  child: unknown,
  stack: Array<Record<string, unknown> | unknown[]>,
  map: (text: string) => string,
): unknown {
  if (typeof child === "string") return map(child);
  if (typeof child !== "object" || child === null) return child;
  const copy = Array.isArray(child) ? [...child] : { ...child };
  stack.push(copy as Record<string, unknown> | unknown[]);
  return copy;
}
