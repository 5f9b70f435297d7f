/**
 * The benchmark's profiles: where each hop runs and how fast the simulated model is.
 * - "zero": everything on 127.0.0.1 and zero model time — Deltagate's own overhead;
 * - "link": the client's hop (to Deltagate or straight to the upstream) through a shaped link
 *   (`BENCH_LINK`, default 40 ms RTT, 2 Mbit/s up), Deltagate → upstream on loopback, fast model;
 * - "far2" / "far10": a far provider: client → edge 20 ms RTT, client → provider 100 ms,
 *   edge → provider 80 ms on a fast backbone; the client's uplink 2 or 10 Mbit/s; fast model;
 * - "far2-real": far2 with a model-time setting close to a hosted model (model-time.ts);
 * - "providers": issue #26's Claude and Gemini loops (through Deltagate and direct) on loopback
 *   with the fast model, whose prefill time per uncached token makes the prompt cache show.
 * Owns the client-side link proxies of a profile (client → edge in front of each gateway endpoint:
 * Deltagate, and the floor relay and the runtime ports when the run has them; client →
 * provider in front of the simulator) and the per-loop accounting of every shaped hop; the
 * edge → provider proxy belongs to the stack (stack.ts), which must know its port before Deltagate
 * starts.
 * Invariant: loops run one at a time, so the difference of two snapshots taken around a loop is
 * exactly that loop's traffic on each hop.
 */
import type { GatewayTargets, GatewayUrls } from "./gateways.ts";
import { type LinkProxy, type LinkProxyStats, startLinkProxy } from "./link-proxy.ts";
import { describeLink, type LinkSpec, parseLinkSpec } from "./link-spec.ts";
import type { HopId, HopTraffic } from "./metrics.ts";
import { describeModelTime, type ModelTimeId } from "./model-time.ts";
import {
  FLOOR_SCENARIO_IDS,
  PROVIDER_SCENARIO_IDS,
  SCENARIO_IDS,
  type ScenarioId,
  type ScenarioTargets,
} from "./scenarios.ts";

/** Profile ids, in report order. */
export const PROFILE_IDS = ["zero", "link", "far2", "far10", "far2-real", "providers"] as const;
/** One of `PROFILE_IDS`. */
export type ProfileId = (typeof PROFILE_IDS)[number];

/** A profile's shape (before anything is started). */
export interface ProfileDef {
  id: ProfileId;
  modelTime: ModelTimeId;
  /** Client → Deltagate; null = loopback. */
  clientEdge: LinkSpec | null;
  /** Client → upstream (the direct scenarios); null = loopback. */
  clientProvider: LinkSpec | null;
  /** Deltagate → upstream; null = loopback. */
  edgeProvider: LinkSpec | null;
  /** Scenarios run in this profile unless `BENCH_SCENARIOS` has entries for it (bench/config.ts). */
  defaultScenarios: readonly ScenarioId[];
  /**
   * True for the profiles the issue #8 targets are measured in (zero, far2): they get
   * `BENCH_ROUNDS` rounds; the others get `BENCH_SECONDARY_ROUNDS` (fewer by default, to fit the
   * 10-minute budget).
   */
  primary: boolean;
  /** What the profile assumes and which way each simplification leans. */
  assumptions: string;
}

/** The far-provider geometry: RTTs in ms; the backbone is the edge → provider path. */
const FAR = { clientEdgeRttMs: 20, clientProviderRttMs: 100, edgeProviderRttMs: 80 };
/** Edge → provider: a datacenter backbone, 1 Gbit/s each way, TCP + TLS setup per new connection. */
export const BACKBONE = "rtt=80ms,up=1gbit,down=1gbit,hs=2";

const far = (up: string, down: string): { edge: LinkSpec; provider: LinkSpec } => ({
  edge: parseLinkSpec(`rtt=${FAR.clientEdgeRttMs}ms,up=${up},down=${down}`),
  provider: parseLinkSpec(`rtt=${FAR.clientProviderRttMs}ms,up=${up},down=${down}`),
});

/**
 * Every scenario but the providers' (issue #26), which are about the prompt cache and need model
 * time to show it: they run in the providers profile.
 */
const ALL: readonly ScenarioId[] = SCENARIO_IDS.filter((id) => !PROVIDER_SCENARIO_IDS.includes(id));
/**
 * Every scenario but the floor comparison's (issue #27): that one is about the runtime's and
 * Deltagate's own cost per turn, which the zero profile isolates; on a shaped link it would only
 * add the same link time to both sides.
 */
const ALL_BUT_FLOOR: readonly ScenarioId[] = ALL.filter((id) => !FLOOR_SCENARIO_IDS.includes(id));
/**
 * The secondary profiles run the headline comparison only (A, E, DG-ws): every scenario in every
 * profile would take about 25 minutes; `BENCH_SCENARIOS` runs any set everywhere.
 */
const LINK_SET: readonly ScenarioId[] = ["A", "E", "DG-ws"];
/** far10: how a faster uplink narrows the gap. */
const FAR10_SET: readonly ScenarioId[] = ["A", "E", "DG-ws"];
/** far2-real: the headline comparison with model time close to a hosted model. */
const REAL_SET: readonly ScenarioId[] = ["A", "E", "DG-ws"];

const FAR_NOTE =
  "Client → Deltagate 20 ms RTT, client → upstream 100 ms RTT (a provider region far from the user), " +
  "Deltagate → upstream 80 ms RTT on a 1 Gbit/s backbone; every new connection on any hop pays 2 RTTs of " +
  "TCP + TLS setup first. Leans: the backbone hop is shaped like the others (FIFO, no loss), and Deltagate's " +
  "own upstream connections pay it too (fair to both sides); the client → upstream RTT is an assumption — a user " +
  "near the provider's region has a shorter one, which favours the direct scenarios; a shared uplink (two " +
  "connections at once) is not modelled, since a loop uses one connection at a time.";

/**
 * Every profile, with the link profile's client link from `BENCH_LINK`.
 * @param link the parsed `BENCH_LINK`.
 */
export function profileDefs(link: LinkSpec): ProfileDef[] {
  const far2 = far("2mbit", "20mbit");
  const far10 = far("10mbit", "100mbit");
  return [
    {
      id: "zero",
      modelTime: "zero",
      clientEdge: null,
      clientProvider: null,
      edgeProvider: null,
      defaultScenarios: ALL,
      primary: true,
      assumptions:
        "Every hop on 127.0.0.1 and zero model time: the loop time is transport, serialization and gateway " +
        "work only. Re-sending the history costs a direct client almost nothing here, so this profile isolates " +
        "Deltagate's own cost (its extra hop, the Durable Object, the context rebuild) — not the product's claim.",
    },
    {
      id: "link",
      modelTime: "fast",
      clientEdge: link,
      clientProvider: link,
      edgeProvider: null,
      defaultScenarios: LINK_SET,
      primary: false,
      assumptions:
        `The client's hop (to Deltagate, or straight to the upstream) is one shaped link (${describeLink(link)}; ` +
        "`BENCH_LINK`), standing for a mobile or home-broadband client; Deltagate → upstream is free (loopback). " +
        "Leans: the direct client reaches the upstream over the same short RTT as the edge (generous to the " +
        "direct scenarios), and Deltagate's upstream hop costs nothing (generous to Deltagate); the far profiles " +
        "model both properly.",
    },
    {
      id: "far2",
      modelTime: "fast",
      clientEdge: far2.edge,
      clientProvider: far2.provider,
      edgeProvider: parseLinkSpec(BACKBONE),
      defaultScenarios: ALL_BUT_FLOOR,
      primary: true,
      assumptions: `A mobile client with a 2 Mbit/s uplink (20 Mbit/s down). ${FAR_NOTE}`,
    },
    {
      id: "far10",
      modelTime: "fast",
      clientEdge: far10.edge,
      clientProvider: far10.provider,
      edgeProvider: parseLinkSpec(BACKBONE),
      defaultScenarios: FAR10_SET,
      primary: false,
      assumptions: `A client with a 10 Mbit/s uplink (100 Mbit/s down). ${FAR_NOTE}`,
    },
    {
      id: "far2-real",
      modelTime: "real",
      clientEdge: far2.edge,
      clientProvider: far2.provider,
      edgeProvider: parseLinkSpec(BACKBONE),
      defaultScenarios: REAL_SET,
      primary: false,
      assumptions:
        `far2's network with model time close to a hosted model (${describeModelTime("real")}). The same model ` +
        "time is added to every scenario, so every ratio moves toward 1: the conservative setting for a speed claim.",
    },
    {
      id: "providers",
      modelTime: "fast",
      clientEdge: null,
      clientProvider: null,
      edgeProvider: null,
      defaultScenarios: PROVIDER_SCENARIO_IDS,
      primary: false,
      assumptions:
        `Issue #26's Claude and Gemini loops: every hop on 127.0.0.1, the fast model (${describeModelTime("fast")}), ` +
        "so a turn's time to first event grows with the tokens the prompt cache did not hold and the cache shows in " +
        "latency, not hidden behind link time. Leans: loopback makes the direct clients' full-history uploads free " +
        "(favours AN-direct and GM-direct; far2 would add about a second of upload per late turn at 2 Mbit/s); the " +
        "simulator's prefill is linear in uncached tokens at a fixed rate and its Gemini implicit cache hits every " +
        "time it can (simulator/gemini/implicit-cache.ts), so GM-direct's cache is the upper bound a real one reaches.",
    },
  ];
}

/** The key of the upstream slot a profile uses: its model time, and whether it is far. */
export function upstreamKey(def: Pick<ProfileDef, "modelTime" | "edgeProvider">): string {
  return `${def.modelTime}${def.edgeProvider ? "-far" : ""}`;
}

/** A heading for a profile, e.g. "far2 (client → edge RTT 20 ms, up 2 Mbit/s, …; fast model)". */
export function profileLabel(def: ProfileDef): string {
  const parts: string[] = [];
  if (def.clientEdge && def.clientProvider === def.clientEdge) {
    parts.push(`client → edge or upstream: ${describeLink(def.clientEdge)}`);
  } else {
    if (def.clientEdge) parts.push(`client → edge: ${describeLink(def.clientEdge)}`);
    if (def.clientProvider) parts.push(`client → upstream: ${describeLink(def.clientProvider)}`);
  }
  if (def.edgeProvider) parts.push(`edge → upstream: ${describeLink(def.edgeProvider)}`);
  if (parts.length === 0) parts.push("every hop on 127.0.0.1");
  parts.push(`model: ${describeModelTime(def.modelTime)}`);
  return `${def.id} (${parts.join("; ")})`;
}

/** Cumulative counters of a profile's shaped hops. */
export type HopSnapshot = Partial<Record<HopId, LinkProxyStats>>;

/** A profile ready to run loops against. */
export interface Profile {
  def: ProfileDef;
  label: string;
  targets: ScenarioTargets;
  snapshot(): HopSnapshot;
  /** Stops the profile's own proxies (not the stack's). Idempotent; never throws. */
  close(): Promise<void>;
}

function portOf(url: string): number {
  const port = Number(new URL(url).port);
  if (!Number.isInteger(port) || port <= 0) throw new Error(`no explicit port in ${url}`);
  return port;
}

/** What a profile needs from the running stack. */
export interface ProfileStackView {
  /** The gateways' own `…/v1` base URLs (gateways.ts). */
  gateways: GatewayTargets;
  deltagateApiKey: string;
  /** The upstream slot of this profile (stack.ts). */
  simulatorUrl: string;
  recorder: ScenarioTargets["recorder"];
  models: ScenarioTargets["models"];
  /** The slot's edge → provider proxy, if the profile has that hop. */
  backbone: LinkProxy | null;
}

/**
 * Starts a profile's client-side proxies on top of the stack.
 * @throws {Error} when a proxy cannot listen.
 */
export async function startProfile(def: ProfileDef, stack: ProfileStackView): Promise<Profile> {
  const own: Array<[HopId, LinkProxy]> = [];
  const close = async (): Promise<void> => {
    await Promise.all(own.map(([, p]) => p.close()));
  };
  try {
    // Every gateway endpoint the client may use gets its own client → edge link, the same shape.
    const gateways: GatewayTargets = {};
    const edge = async (url: string): Promise<string> => {
      if (!def.clientEdge) return url;
      const proxy = await startLinkProxy({ targetPort: portOf(url), spec: def.clientEdge });
      own.push(["client-edge", proxy]);
      return `${proxy.origin}${new URL(url).pathname}`;
    };
    for (const [id, urls] of Object.entries(stack.gateways) as Array<[keyof GatewayTargets, GatewayUrls]>) {
      gateways[id] = {
        proxy: await edge(urls.proxy),
        runtime: urls.runtime ? await edge(urls.runtime) : null,
      };
    }
    let simulatorBaseUrl = `${stack.simulatorUrl}/v1`;
    if (def.clientProvider) {
      const proxy = await startLinkProxy({
        targetPort: portOf(stack.simulatorUrl),
        spec: def.clientProvider,
      });
      own.push(["client-provider", proxy]);
      simulatorBaseUrl = `${proxy.origin}/v1`;
    }
    const hops: Array<[HopId, LinkProxy]> = [
      ...own,
      ...(stack.backbone ? [["edge-provider", stack.backbone] as [HopId, LinkProxy]] : []),
    ];
    return {
      def,
      label: profileLabel(def),
      targets: {
        gateways,
        deltagateApiKey: stack.deltagateApiKey,
        simulatorBaseUrl,
        models: stack.models,
        recorder: stack.recorder,
      },
      snapshot: () => snapshotOf(hops),
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}

/** The counters of each hop, summed over its proxies (client → edge has one per gateway endpoint). */
function snapshotOf(hops: Array<[HopId, LinkProxy]>): HopSnapshot {
  const out: HopSnapshot = {};
  for (const [id, proxy] of hops) {
    const stats = proxy.stats();
    const sum = out[id];
    out[id] = sum
      ? {
          connections: sum.connections + stats.connections,
          up: addCounters(sum.up, stats.up),
          down: addCounters(sum.down, stats.down),
        }
      : stats;
  }
  return out;
}

function addCounters(a: LinkProxyStats["up"], b: LinkProxyStats["up"]): LinkProxyStats["up"] {
  return {
    bytes: a.bytes + b.bytes,
    deliveries: a.deliveries + b.deliveries,
    lateMsSum: a.lateMsSum + b.lateMsSum,
    lateOver2Ms: a.lateOver2Ms + b.lateOver2Ms,
  };
}

/** Each hop's traffic between two snapshots of the same profile. */
export function hopsBetween(before: HopSnapshot, after: HopSnapshot): Partial<Record<HopId, HopTraffic>> {
  const out: Partial<Record<HopId, HopTraffic>> = {};
  for (const [id, a] of Object.entries(after) as Array<[HopId, LinkProxyStats]>) {
    const b = before[id];
    if (!b) continue;
    out[id] = {
      connections: a.connections - b.connections,
      upBytes: a.up.bytes - b.up.bytes,
      downBytes: a.down.bytes - b.down.bytes,
      deliveries: a.up.deliveries - b.up.deliveries + (a.down.deliveries - b.down.deliveries),
      lateMsSum: a.up.lateMsSum - b.up.lateMsSum + (a.down.lateMsSum - b.down.lateMsSum),
      lateOver2Ms: a.up.lateOver2Ms - b.up.lateOver2Ms + (a.down.lateOver2Ms - b.down.lateOver2Ms),
    };
  }
  return out;
}
