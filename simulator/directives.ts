/**
 * Test directives: `[sim:key=value]` markers in the text of the LAST user message steer the
 * simulator (tool rounds, parallel calls, answer length, failures, delays). The full list is
 * documented in simulator/README.md. Unknown keys and malformed values are ignored.
 */

/** What the `fail=` directive asks for: an HTTP/WS error before any event, or a mid-stream drop. */
export type FailureMode = { kind: "before"; status: number } | { kind: "midstream" };

/** Parsed directives with defaults applied. */
export interface Directives {
  /** Tool rounds before the final answer (`tools=N`, default 1). */
  toolRounds: number;
  /** Parallel function calls per round (`parallel=N`, default 1). */
  parallel: number;
  /** Answer length in tokens for plain answers (`tokens=N`, default 40). */
  answerTokens: number;
  /** Simulated failure (`fail=before|midstream|status:NNN`), or null. */
  fail: FailureMode | null;
  /** Extra delay before the first event in ms (`delay_ms=N`, default 0). */
  delayMs: number;
  /** WS only: drop the socket right after the create frame (`ws_drop=1`). */
  wsDrop: boolean;
  /**
   * WS only, seeded random loss of upstream state (`ws_drop_pct=P`, 0–100): see `wsLossFor` in
   * ws-faults.ts. 0 = off.
   */
  wsDropPct: number;
  /** Seed of `ws_drop_pct` (`ws_drop_seed=S`, default 1). */
  wsDropSeed: number;
  /**
   * WS only: responses one connection serves before it answers `websocket_connection_limit_reached`
   * and closes, like OpenAI's 60-minute limit (`ws_limit=N`; 0 = unlimited).
   */
  wsMaxResponses: number;
  /**
   * Chat Completions streaming only (`split_chars=1`): every chunk containing multi-byte UTF-8
   * characters is written in several `res.write` calls cut inside those characters. Generated
   * answers are ASCII: put the non-ASCII text in a tool output or a backticked command.
   */
  splitChars: boolean;
  /**
   * Text the "model" weaves into its output (`emit_hex=HEX`, UTF-8 in hex): the middle of a plain
   * answer, the end of a tool-output summary, the end of a generated shell command. Hex keeps the
   * text itself out of the input, so a safety classifier sees it only in the output. Null = none.
   */
  emit: string | null;
  /** Code points per text/arguments delta (`delta_chars=N`, 1–64; default 16). */
  deltaChars: number;
  /**
   * Responses only (`reasoning=1`): the output starts with a `reasoning` item (with
   * `encrypted_content` when the request's `include` asks for it), as a reasoning model's does.
   */
  reasoning: boolean;
  /**
   * Responses API only (`hold=NAME`, NAME of letters, digits, `_.:-`): everything but the terminal
   * event is sent, then the response waits for `POST /_sim/release?hold=NAME` (simulator/holds.ts).
   */
  hold: string | null;
  /**
   * Chat Completions streaming only (`no_usage=1`): no usage chunk even with
   * `stream_options.include_usage`, as some open-source servers do.
   */
  noUsage: boolean;
  /** Seconds of the `retry-after` header on a `fail=status:NNN` answer (`retry_after=S`), or null. */
  retryAfterS: number | null;
  /** Anthropic `/v1/messages` with thinking on (`redacted=1`): a `redacted_thinking` block first. */
  redacted: boolean;
}

/** Defaults used when no directive is present. */
export const DEFAULT_DIRECTIVES: Directives = {
  toolRounds: 1,
  parallel: 1,
  answerTokens: 40,
  fail: null,
  delayMs: 0,
  wsDrop: false,
  wsDropPct: 0,
  wsDropSeed: 1,
  wsMaxResponses: 0,
  splitChars: false,
  emit: null,
  deltaChars: 16,
  reasoning: false,
  hold: null,
  noUsage: false,
  retryAfterS: null,
  redacted: false,
};

const DIRECTIVE_RE = /\[sim:([a-z_]+)=([^\]\s]+)\]/g;

function parseCount(value: string, min: number, max: number): number | null {
  if (!/^\d+$/.test(value)) return null;
  const n = Number(value);
  return n >= min && n <= max ? n : null;
}

/** Decodes `emit_hex`: an even number of hex digits (≤ 2,048 bytes) as UTF-8, else null. */
function parseHex(value: string): string | null {
  if (!/^(?:[0-9a-fA-F]{2}){1,2048}$/.test(value)) return null;
  return Buffer.from(value, "hex").toString("utf8");
}

function parseFail(value: string): FailureMode | null {
  if (value === "before") return { kind: "before", status: 500 };
  if (value === "midstream") return { kind: "midstream" };
  const m = /^status:(\d{3})$/.exec(value);
  if (m?.[1]) {
    const status = Number(m[1]);
    if (status >= 400 && status <= 599) return { kind: "before", status };
  }
  return null;
}

/** Parses every `[sim:key=value]` in `text` (later markers win) on top of the defaults. */
export function parseDirectives(text: string): Directives {
  const d: Directives = { ...DEFAULT_DIRECTIVES };
  for (const match of text.matchAll(DIRECTIVE_RE)) {
    const key = match[1] ?? "";
    const value = match[2] ?? "";
    switch (key) {
      case "tools":
        d.toolRounds = parseCount(value, 0, 1000) ?? d.toolRounds;
        break;
      case "parallel":
        d.parallel = parseCount(value, 1, 64) ?? d.parallel;
        break;
      case "tokens":
        d.answerTokens = parseCount(value, 0, 1_000_000) ?? d.answerTokens;
        break;
      case "fail":
        d.fail = parseFail(value) ?? d.fail;
        break;
      case "delay_ms":
        d.delayMs = parseCount(value, 0, 600_000) ?? d.delayMs;
        break;
      case "ws_drop":
        d.wsDrop = value === "1" || value === "true";
        break;
      case "ws_drop_pct":
        d.wsDropPct = parseCount(value, 0, 100) ?? d.wsDropPct;
        break;
      case "ws_drop_seed":
        d.wsDropSeed = parseCount(value, 0, 2 ** 31) ?? d.wsDropSeed;
        break;
      case "ws_limit":
        d.wsMaxResponses = parseCount(value, 0, 1_000_000) ?? d.wsMaxResponses;
        break;
      case "split_chars":
        d.splitChars = value === "1" || value === "true";
        break;
      case "emit_hex":
        d.emit = parseHex(value) ?? d.emit;
        break;
      case "delta_chars":
        d.deltaChars = parseCount(value, 1, 64) ?? d.deltaChars;
        break;
      case "reasoning":
        d.reasoning = value === "1" || value === "true";
        break;
      case "no_usage":
        d.noUsage = value === "1" || value === "true";
        break;
      case "retry_after":
        d.retryAfterS = parseCount(value, 0, 3600) ?? d.retryAfterS;
        break;
      case "redacted":
        d.redacted = value === "1" || value === "true";
        break;
      case "hold":
        d.hold = /^[A-Za-z0-9_.:-]{1,64}$/.test(value) ? value : d.hold;
        break;
      default:
        break;
    }
  }
  return d;
}

/** Removes all `[sim:…]` markers from `text` and trims it (the "user's text" the policy sees). */
export function stripDirectives(text: string): string {
  return text
    .replace(/\[sim:[^\]]*\]/g, " ")
    .replace(/\s+/g, " ")
    .trim();
}
