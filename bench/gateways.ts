/**
 * The gateways a benchmark run can put between a client and the upstream, each its own
 * `wrangler dev` (bench/stack.ts), and the two ways a client reaches one:
 * - "deltagate": Deltagate with its default settings;
 * - "deltagate-nolog": the same with `TURN_LOG=0` (no per-turn log line), beside it, so the cost
 *   of the log line is a difference of two gateways in the same rounds;
 * - "floor": the minimal relay of bench/floor/ (the floor of what any relay on this runtime costs);
 * - path "proxy": wrangler dev's public port, where its ProxyWorker relays every request and
 *   frame to the runtime (a local hop production does not have);
 * - path "runtime": the runtime's own port behind it (scripts/runtime-origin.ts), as a deployment
 *   is reached.
 * Owns the names only: which gateways a set of scenarios needs, and an endpoint's label.
 */

/** Gateway ids, in report order. */
export const GATEWAY_IDS = ["deltagate", "deltagate-nolog", "floor"] as const;
/** One of `GATEWAY_IDS`. */
export type GatewayId = (typeof GATEWAY_IDS)[number];

/** How a client reaches a gateway. */
export type GatewayPath = "proxy" | "runtime";

/** A gateway endpoint a scenario talks to. */
export interface Via {
  gateway: GatewayId;
  path: GatewayPath;
}

/** The `…/v1` base URLs of one gateway as the client reaches them (runtime: null when not found). */
export interface GatewayUrls {
  proxy: string;
  runtime: string | null;
}

/** Base URLs of the gateways a run started, by id. */
export type GatewayTargets = Partial<Record<GatewayId, GatewayUrls>>;

/** "deltagate (runtime port)" etc., for errors and tables. */
export function describeVia(via: Via): string {
  return `${via.gateway} (${via.path === "proxy" ? "wrangler dev's proxy" : "runtime port"})`;
}

/**
 * The base URL of `via` in `targets`.
 * @throws {Error} when that gateway was not started or its runtime port was not found (the
 *   scenario is then reported unavailable, with this reason).
 */
export function baseUrlOf(targets: GatewayTargets, via: Via): string {
  const urls = targets[via.gateway];
  if (!urls) throw new Error(`${via.gateway} was not started in this run`);
  const url = via.path === "proxy" ? urls.proxy : urls.runtime;
  if (!url) throw new Error(`${describeVia(via)} is not reachable: the runtime's port was not found`);
  return url;
}
