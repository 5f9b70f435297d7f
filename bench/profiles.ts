/**
 * The benchmark's network profiles — where the client's hop runs:
 * - "loopback": the client talks to the simulator (A) or Deltagate (B/C/D) directly on 127.0.0.1;
 * - "link": the same hop goes through a link-shaping proxy (link-proxy.ts, `BENCH_LINK`), standing
 *   for a mobile / home client's link to the nearest edge. Deltagate → simulator stays on
 *   loopback in both: it stands for the edge → inference path on a fast backbone.
 * Owns the proxies of the link profile (one in front of Deltagate, one in front of the
 * simulator) and the per-loop accounting of their traffic.
 * Invariant: loops run one at a time, so the difference of two proxy snapshots taken around a
 * loop is exactly that loop's client traffic.
 */
import { type LinkProxy, type LinkProxyStats, startLinkProxy } from "./link-proxy.ts";
import { describeLink, type LinkSpec } from "./link-spec.ts";
import type { WireTraffic } from "./metrics.ts";
import type { BenchTargets } from "./scenarios.ts";

/** Profile ids, in report order. */
export const PROFILE_IDS = ["loopback", "link"] as const;
/** One of `PROFILE_IDS`. */
export type ProfileId = (typeof PROFILE_IDS)[number];

/** A profile ready to run loops against. */
export interface Profile {
  id: ProfileId;
  /** Heading for the report, e.g. "link (RTT 40 ms, up 2 Mbit/s, …)". */
  label: string;
  /** The client link's shape, null on loopback. */
  link: LinkSpec | null;
  /** Where this profile's scenarios send their requests. */
  targets: BenchTargets;
  /** Cumulative client-link counters (null on loopback); pass two to `wireBetween`. */
  snapshot(): LinkProxyStats[] | null;
  /** Stops the profile's proxies. Idempotent; never throws. */
  close(): Promise<void>;
}

function portOf(url: string): number {
  const port = Number(new URL(url).port);
  if (!Number.isInteger(port) || port <= 0) throw new Error(`no explicit port in ${url}`);
  return port;
}

/**
 * Sets up one profile on top of the direct (loopback) targets.
 * @param direct the stack's own URLs (Deltagate's `…/v1` base URL, the simulator's origin).
 * @param spec the client link, used by the "link" profile.
 * @throws {Error} when a proxy cannot listen.
 */
export async function startProfile(id: ProfileId, direct: BenchTargets, spec: LinkSpec): Promise<Profile> {
  if (id === "loopback") {
    return {
      id,
      label: "loopback (client on 127.0.0.1, no link shaping)",
      link: null,
      targets: direct,
      snapshot: () => null,
      close: () => Promise.resolve(),
    };
  }
  const proxies: LinkProxy[] = [];
  const close = async (): Promise<void> => {
    await Promise.all(proxies.map((p) => p.close()));
  };
  try {
    const deltagate = await startLinkProxy({ targetPort: portOf(direct.deltagateBaseUrl), spec });
    proxies.push(deltagate);
    const simulator = await startLinkProxy({ targetPort: portOf(direct.simulatorUrl), spec });
    proxies.push(simulator);
    return {
      id,
      label: `link (${describeLink(spec)})`,
      link: spec,
      targets: {
        ...direct,
        deltagateBaseUrl: `${deltagate.origin}${new URL(direct.deltagateBaseUrl).pathname}`,
        simulatorUrl: simulator.origin,
      },
      snapshot: () => proxies.map((p) => p.stats()),
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}

/**
 * The client traffic between two snapshots of the same profile (summed over its proxies).
 * @returns null when either snapshot is null (loopback).
 */
export function wireBetween(
  before: LinkProxyStats[] | null,
  after: LinkProxyStats[] | null,
): WireTraffic | null {
  if (!before || !after) return null;
  const wire: WireTraffic = {
    connections: 0,
    upBytes: 0,
    downBytes: 0,
    deliveries: 0,
    lateMsSum: 0,
    lateOver2Ms: 0,
  };
  after.forEach((a, i) => {
    const b = before[i];
    if (!b) return;
    wire.connections += a.connections - b.connections;
    wire.upBytes += a.up.bytes - b.up.bytes;
    wire.downBytes += a.down.bytes - b.down.bytes;
    wire.deliveries += a.up.deliveries - b.up.deliveries + (a.down.deliveries - b.down.deliveries);
    wire.lateMsSum += a.up.lateMsSum - b.up.lateMsSum + (a.down.lateMsSum - b.down.lateMsSum);
    wire.lateOver2Ms += a.up.lateOver2Ms - b.up.lateOver2Ms + (a.down.lateOver2Ms - b.down.lateOver2Ms);
  });
  return wire;
}
