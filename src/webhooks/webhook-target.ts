/**
 * Where a webhook may be delivered: the one check of a tenant's endpoint URL, made when an operator
 * sets it (the admin API) and again before every delivery attempt (src/session/webhook-deliveries.ts).
 * Owns the rule:
 * - `https:` only, no user name or password in the URL (a credential must never travel with a
 *   webhook), at most `MAX_URL_CHARS`;
 * - a private or loopback target — `localhost` and `*.localhost`, an IPv4 literal in a private,
 *   loopback, link-local, shared (CGNAT), benchmark, multicast or reserved block, an IPv6 literal
 *   that is loopback, unspecified, unique-local, link-local, multicast or an IPv4-mapped one of
 *   those — is refused unless the operator allows it (`WEBHOOK_ALLOW_PRIVATE_TARGETS`: every one,
 *   or the listed origins), and then plain `http:` is allowed too (a local receiver for
 *   development). The URL parser has already normalized the host (`http://2130706433/` is
 *   `127.0.0.1`, `[::ffff:127.0.0.1]` is `[::ffff:7f00:1]`), so each form is checked once.
 * Not covered: a public host name whose DNS answers a private address — a Worker cannot resolve
 * names, and its `fetch()` leaves from Cloudflare's network, which does not reach a private one.
 * Source: https://github.com/standard-webhooks/standard-webhooks/blob/main/spec/standard-webhooks.md
 *   ("Server side request forgery"), RFC 6761 §6.3 (localhost), RFC 6890 (special-purpose blocks)
 */

/** Longest endpoint URL accepted, in characters. */
export const MAX_URL_CHARS = 2048;

/** Which private or loopback targets the operator allows: every one, or these origins. */
export type PrivateTargets = "all" | ReadonlySet<string>;

/** IPv4 blocks (address, prefix length) that are not public destinations (RFC 6890). */
const PRIVATE_V4: ReadonlyArray<readonly [number, number]> = [
  [0x00000000, 8], // "this network"
  [0x0a000000, 8], // private
  [0x64400000, 10], // shared address space (CGNAT)
  [0x7f000000, 8], // loopback
  [0xa9fe0000, 16], // link-local (cloud metadata services live here)
  [0xac100000, 12], // private
  [0xc0000000, 24], // IETF protocol assignments
  [0xc0a80000, 16], // private
  [0xc6120000, 15], // benchmarking
  [0xe0000000, 3], // multicast and reserved, up to the broadcast address
];

/** The 32-bit value of a dotted-quad IPv4 address, or null. */
function ipv4(host: string): number | null {
  const parts = host.split(".");
  if (parts.length !== 4 || parts.some((p) => !/^\d{1,3}$/.test(p) || Number(p) > 255)) return null;
  return parts.reduce((value, part) => value * 256 + Number(part), 0);
}

function privateV4(address: number): boolean {
  return PRIVATE_V4.some(
    ([block, bits]) => Math.floor(address / 2 ** (32 - bits)) === block / 2 ** (32 - bits),
  );
}

/** The eight 16-bit groups of a normalized IPv6 literal (without brackets), or null. */
function ipv6(host: string): number[] | null {
  const [head = "", tail, extra] = host.split("::");
  if (extra !== undefined) return null;
  const parse = (text: string) => (text === "" ? [] : text.split(":").map((g) => Number.parseInt(g, 16)));
  const left = parse(head);
  const right = tail === undefined ? [] : parse(tail);
  const missing = 8 - left.length - right.length;
  if ((tail === undefined && missing !== 0) || missing < 0) return null;
  const groups = [...left, ...new Array<number>(missing).fill(0), ...right];
  return groups.some((g) => !Number.isInteger(g) || g < 0 || g > 0xffff) ? null : groups;
}

function privateV6(groups: number[]): boolean {
  const [first = 0] = groups;
  const zeroPrefix = groups.slice(0, 5).every((g) => g === 0);
  if (zeroPrefix && groups[5] === 0xffff) return privateV4(groups[6]! * 65536 + groups[7]!); // IPv4-mapped
  if (groups.slice(0, 7).every((g) => g === 0) && (groups[7] === 0 || groups[7] === 1)) return true; // :: and ::1
  return (first & 0xfe00) === 0xfc00 || (first & 0xffc0) === 0xfe80 || (first & 0xff00) === 0xff00;
}

/** Whether `hostname` (as `URL` normalized it) names a private or loopback destination. */
export function isPrivateHost(hostname: string): boolean {
  const host = hostname.toLowerCase().replace(/\.$/, "");
  if (host === "localhost" || host.endsWith(".localhost")) return true;
  if (host.startsWith("[") && host.endsWith("]")) {
    const groups = ipv6(host.slice(1, -1));
    return groups === null || privateV6(groups); // an IPv6 literal we cannot read is not trusted
  }
  const v4 = ipv4(host);
  return v4 !== null && privateV4(v4);
}

/**
 * Why `raw` may not receive webhooks, or null when it may.
 * @param allowed the private or loopback targets the operator allows.
 */
export function targetRefusal(raw: string, allowed: PrivateTargets): string | null {
  if (raw.length > MAX_URL_CHARS) return `The URL is longer than ${MAX_URL_CHARS} characters.`;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return "Not an absolute URL.";
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") return "The URL must be https.";
  if (url.username !== "" || url.password !== "") return "The URL may not carry a user name or password.";
  if (isPrivateHost(url.hostname)) {
    if (allowed === "all" || allowed.has(url.origin)) return null;
    return "Private and loopback targets are refused (WEBHOOK_ALLOW_PRIVATE_TARGETS allows them for development).";
  }
  return url.protocol === "https:" ? null : "The URL must be https.";
}

/**
 * `WEBHOOK_ALLOW_PRIVATE_TARGETS`: unset → none; `true` (or `1`, `on`, `yes`) → every private or
 * loopback target; `false` (`0`, `off`, `no`) → none; else comma-separated origins, each exactly
 * `scheme://host[:port]`.
 * @throws {Error} naming the variable and the entry that is not an origin.
 */
export function parsePrivateTargets(raw: string | undefined, name: string): PrivateTargets {
  const value = raw?.trim() ?? "";
  const word = value.toLowerCase();
  if (value === "" || ["0", "false", "off", "no"].includes(word)) return new Set();
  if (["1", "true", "on", "yes"].includes(word)) return "all";
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
