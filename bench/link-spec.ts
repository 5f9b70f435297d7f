/**
 * The client-link model of the benchmark's "link" profile and its text form (`BENCH_LINK`), e.g.
 * `rtt=40ms,up=2mbit,down=20mbit` — a typical mobile / home-broadband client: tens of ms to the
 * nearest edge, an uplink an order of magnitude slower than the downlink.
 * Owns parsing and printing of that form; the proxy that applies it is link-proxy.ts.
 * Invariant: a parsed `LinkSpec` is always usable as is (finite, non-negative latency; positive
 * bandwidths; whole handshake round trips), so the proxy never re-validates.
 */
import { z } from "zod";

/** How a client link is shaped (applied per TCP connection, each direction separately). */
export interface LinkSpec {
  /** Round-trip time in ms; each direction adds half of it as one-way latency. */
  rttMs: number;
  /** Client → server bandwidth, bits per second. */
  upBitsPerSecond: number;
  /** Server → client bandwidth, bits per second. */
  downBitsPerSecond: number;
  /**
   * Round trips a new connection spends before its first request byte can leave the client:
   * 1 = TCP's handshake, 2 = TCP + TLS 1.3 (what an `https://` / `wss://` client pays; the
   * benchmark itself speaks plain HTTP on loopback, so the proxy stands in for it).
   */
  handshakeRtts: number;
}

/** The default of `BENCH_LINK`. */
export const DEFAULT_LINK = "rtt=40ms,up=2mbit,down=20mbit";
/** Handshake round trips when `hs` is not given: TCP + TLS 1.3, as a real `https`/`wss` client. */
export const DEFAULT_HANDSHAKE_RTTS = 2;

const UNIT_BITS: Record<string, number> = { bit: 1, kbit: 1e3, mbit: 1e6, gbit: 1e9 };

const duration = z
  .string()
  .regex(/^\d+(\.\d+)?(ms)?$/, "a duration like 40ms")
  .transform((s) => Number.parseFloat(s))
  .pipe(z.number().min(0).max(10_000));

const bandwidth = z
  .string()
  .regex(/^\d+(\.\d+)?(bit|kbit|mbit|gbit)$/i, "a bandwidth like 2mbit (bit, kbit, mbit, gbit per second)")
  .transform((s) => {
    const [, value = "", unit = ""] = /^(\d+(?:\.\d+)?)([a-z]+)$/i.exec(s) ?? [];
    return Number.parseFloat(value) * (UNIT_BITS[unit.toLowerCase()] ?? Number.NaN);
  })
  .pipe(z.number().min(1_000).max(1e11));

const specSchema = z
  .object({
    rtt: duration,
    up: bandwidth,
    down: bandwidth,
    hs: z.coerce.number().int().min(0).max(4).default(DEFAULT_HANDSHAKE_RTTS),
  })
  .strict();

/**
 * Parses `rtt=<ms>ms,up=<n><unit>,down=<n><unit>[,hs=<round trips>]` (units: bit, kbit, mbit,
 * gbit per second, decimal SI: 1 mbit = 1,000,000 bit/s).
 * @throws {Error} naming the offending key when the text does not parse.
 */
export function parseLinkSpec(text: string): LinkSpec {
  const fields: Record<string, string> = {};
  for (const part of text.split(",")) {
    const [key, value, ...rest] = part.split("=").map((s) => s.trim());
    if (!key || value === undefined || rest.length > 0) {
      throw new Error(`BENCH_LINK: "${part}" is not key=value (expected e.g. ${DEFAULT_LINK})`);
    }
    fields[key.toLowerCase()] = value;
  }
  const parsed = specSchema.safeParse(fields);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(`BENCH_LINK: ${issue?.path.join(".") || "value"}: ${issue?.message ?? "invalid"}`);
  }
  const { rtt, up, down, hs } = parsed.data;
  return { rttMs: rtt, upBitsPerSecond: up, downBitsPerSecond: down, handshakeRtts: hs };
}

/** A bandwidth for people, e.g. "2 Mbit/s" (decimal SI). */
export function describeRate(bitsPerSecond: number): string {
  if (bitsPerSecond >= 1e9) return `${bitsPerSecond / 1e9} Gbit/s`;
  if (bitsPerSecond >= 1e6) return `${bitsPerSecond / 1e6} Mbit/s`;
  return `${bitsPerSecond / 1e3} kbit/s`;
}

/** Human form of a spec, e.g. "RTT 40 ms, up 2 Mbit/s, down 20 Mbit/s, 2-RTT connection setup". */
export function describeLink(spec: LinkSpec): string {
  return (
    `RTT ${spec.rttMs} ms, up ${describeRate(spec.upBitsPerSecond)}, down ${describeRate(spec.downBitsPerSecond)}, ` +
    `${spec.handshakeRtts}-RTT connection setup`
  );
}

/** The `BENCH_LINK` text of a spec, with every field spelled out (parses back to the same spec). */
export function formatLinkSpec(spec: LinkSpec): string {
  const bits = (b: number): string =>
    b % 1e6 === 0 ? `${b / 1e6}mbit` : b % 1e3 === 0 ? `${b / 1e3}kbit` : `${b}bit`;
  return `rtt=${spec.rttMs}ms,up=${bits(spec.upBitsPerSecond)},down=${bits(spec.downBitsPerSecond)},hs=${spec.handshakeRtts}`;
}
