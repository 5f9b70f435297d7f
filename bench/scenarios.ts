/**
 * The benchmark's scenarios — every way an agent can reach the model, with and without
 * Deltagate — and how one loop of each is run and attributed:
 * - direct competitors: A (HTTP, full history, store:false), A2 (HTTP, store:true +
 *   `previous_response_id`), E (the upstream's own WebSocket mode, delta turns, store:false),
 *   CH (Chat Completions, full history);
 * - Deltagate: DG-ws (WebSocket → Responses WebSocket upstream), DG-http (WebSocket → Responses
 *   HTTP upstream), DG-h2ws (an HTTP-only client, store:true + `previous_response_id` → Responses
 *   WebSocket upstream), DG-chat (WebSocket → Chat Completions upstream);
 * - reconnect variants, the socket dropped every K turns: E-rc, DG-rc (store:false), DG-st-rc
 *   (store:true);
 * - clients that resend everything (issue #18), through Deltagate: DG-sl-http (stateless HTTP, no
 *   session, store:true as the SDKs default), DG-sl-ws (one socket, the whole history each turn,
 *   no `previous_response_id`), DG-cx-rc (Codex-like: drops every K turns and resends the whole
 *   history on the new socket, as Codex does);
 * - the providers (issue #26): the same WebSocket client through Deltagate to Anthropic Messages
 *   with and without automatic cache breakpoints (AN-dg, AN-nocache) and to Gemini (GM-dg), and
 *   each provider's API called directly with the whole history (AN-direct, GM-direct);
 * - the floor (issue #27): the same WebSocket loop through the minimal relay of bench/floor/
 *   (FL-ws store:false, FL-st store:true) beside Deltagate's (DG-ws, DG-st), each also at the
 *   runtime's own port (`@rt`: past wrangler dev's proxy), and Deltagate without its per-turn log
 *   line (DG-nolog, DG-nolog@rt: `TURN_LOG=0`).
 * Each gateway scenario names its direct counterpart (`versus`), the loop it replaces, for the
 * per-turn added latency, and Deltagate's WebSocket loops name their floor (`floor`), the same
 * loop through the minimal relay on the same path. Scenarios do not know the network profile:
 * `ScenarioTargets` carries the URLs the client uses (direct, or a link proxy's) and the model
 * routed to the profile's upstream (profiles.ts, stack.ts).
 * Invariant: loops run one at a time, so the simulator recorder's entries between a loop's start
 * and end are exactly that loop's upstream traffic (the recorder is cleared before each loop).
 */

import { STORE_FALSE_GRACE_HEADER } from "../src/http/client-options.ts";
import { chatTransport } from "./chat-transport.ts";
import { baseUrlOf, type GatewayTargets, type Via } from "./gateways.ts";
import { geminiTransport } from "./gemini-transport.ts";
import { httpTransport } from "./http-transport.ts";
import { runAgentLoop, type TurnTransport } from "./loop.ts";
import { createLoopFetch, type LoopFetch } from "./loop-fetch.ts";
import { messagesTransport } from "./messages-transport.ts";
import type { ClientWire, LoopSample, UpstreamTraffic } from "./metrics.ts";
import type { TrafficRecorder } from "./simulator-process.ts";
import { PROVIDER_MODELS, type SlotModels } from "./stack.ts";
import { TIMING_OPT_IN_HEADER } from "./timing-hook.ts";
import { wsTransport } from "./ws-transport.ts";

/** Scenario ids, in report order. */
export const SCENARIO_IDS = [
  "A",
  "A2",
  "E",
  "CH",
  "DG-ws",
  "DG-http",
  "DG-h2ws",
  "DG-chat",
  "E-rc",
  "DG-rc",
  "DG-st-rc",
  "DG-sl-http",
  "DG-sl-ws",
  "DG-cx-rc",
  "DG-st",
  "FL-ws",
  "FL-st",
  "DG-nolog",
  "DG-ws@rt",
  "DG-st@rt",
  "FL-ws@rt",
  "FL-st@rt",
  "DG-nolog@rt",
  "AN-dg",
  "AN-nocache",
  "AN-direct",
  "GM-dg",
  "GM-direct",
] as const;
/** One of `SCENARIO_IDS`. */
export type ScenarioId = (typeof SCENARIO_IDS)[number];

/** The scenarios of the floor comparison (issue #27), which run by default in the zero profile only. */
export const FLOOR_SCENARIO_IDS: readonly ScenarioId[] = SCENARIO_IDS.filter(
  (id) => id === "DG-st" || id.startsWith("FL-") || id.startsWith("DG-nolog") || id.endsWith("@rt"),
);

/**
 * The provider scenarios (issue #26): Claude and Gemini through Deltagate and directly, which run
 * by default in the providers profile only (profiles.ts).
 */
export const PROVIDER_SCENARIO_IDS: readonly ScenarioId[] = SCENARIO_IDS.filter(
  (id) => id.startsWith("AN-") || id.startsWith("GM-"),
);

/** Where a profile's loops send their requests. */
export interface ScenarioTargets {
  /**
   * The gateways' base URLs including `/v1` as the client reaches them (direct or via a link
   * proxy), per gateway and path (gateways.ts).
   */
  gateways: GatewayTargets;
  /** The client key of every gateway (Deltagate's local development key; the floor takes the same). */
  deltagateApiKey: string;
  /** The simulator's base URL including `/v1` as the client reaches it. */
  simulatorBaseUrl: string;
  /** Deltagate model ids routed to this profile's upstream, per upstream API (stack.ts). */
  models: SlotModels;
  /** The recorder of this profile's simulator (in its own process: simulator-process.ts). */
  recorder: TrafficRecorder;
}

/** What a scenario needs to run one loop. */
export interface ScenarioRunParams {
  targets: ScenarioTargets;
  turns: number;
  /** Unique per loop: the prompt nonce, the `session-id` and the `prompt_cache_key`. */
  nonce: string;
  /** K of the reconnect variants. */
  reconnectEvery: number;
  /** Offer permessage-deflate on WebSockets (Codex does). */
  perMessageDeflate: boolean;
  /** Send the per-stage timing opt-in header (bench/timing-hook.ts). */
  askTiming: boolean;
  turnTimeoutMs: number;
  connectTimeoutMs: number;
}

/** A loop's measurements before the runner adds the hops and the gateway's CPU. */
export type ScenarioLoop = Omit<LoopSample, "hops" | "workerdCpuMs" | "devProxyCpuMs" | "wranglerCpuMs">;

/** A scenario: labels and how to run one loop. */
export interface Scenario {
  id: ScenarioId;
  /** Short label for tables. */
  label: string;
  /** One sentence on what goes over the wire. */
  description: string;
  /** The direct loop this one replaces (for "added latency"), or null for a direct scenario. */
  versus: ScenarioId | null;
  /** The gateway endpoint the loop goes through (its CPU is attributed to the loop); null: direct. */
  via: Via | null;
  /** True when the loop goes through Deltagate (either of its gateways). */
  viaDeltagate: boolean;
  /**
   * Deltagate's WebSocket loops: the same loop through the floor relay on the same path, for
   * "Deltagate over the floor" (floor-report.ts); null otherwise.
   */
  floor?: ScenarioId | null;
  /** The `store` of its WebSocket turns, where the floor comparison needs it (floor-report.ts). */
  store?: boolean;
  /**
   * Runs one loop.
   * @throws {Error} when any turn fails (the caller marks the scenario unavailable or failed).
   */
  run(params: ScenarioRunParams): Promise<ScenarioLoop>;
}

const SIM_KEY = "sim-key";
/** The model name direct scenarios send (the simulator accepts any). */
const DIRECT_MODEL = "deltagate-sim";

function wsUrl(baseUrl: string): string {
  return `${baseUrl.replace(/^http/, "ws")}/responses`;
}

/**
 * The headers every request of a loop carries (a stable session id, as Codex sends; none for a
 * stateless client, which Deltagate routes by its conversation's affinity key).
 */
function loopHeaders(params: ScenarioRunParams, apiKey: string, session = true): Record<string, string> {
  return {
    authorization: `Bearer ${apiKey}`,
    ...(session ? { "session-id": params.nonce } : {}),
    ...(params.askTiming ? { [TIMING_OPT_IN_HEADER]: "true" } : {}),
  };
}

async function traffic(recorder: TrafficRecorder): Promise<UpstreamTraffic> {
  const records = await recorder.list();
  const transports: Record<string, number> = {};
  for (const record of records) transports[record.transport] = (transports[record.transport] ?? 0) + 1;
  const perRequest = records
    .filter((r) => (r.body as { generate?: unknown } | null)?.generate !== false)
    .map((r) => r.bytes);
  return {
    requests: records.length,
    bytes: records.reduce((sum, r) => sum + r.bytes, 0),
    transports,
    perRequest,
  };
}

type HttpKind =
  | { kind: "responses"; style: "full-history" | "chained"; store?: boolean; session?: boolean }
  | { kind: "chat" };

/** Runs an HTTP loop (SDK over a per-loop connection) and attributes the recorder's traffic to it. */
async function httpLoop(
  params: ScenarioRunParams,
  target: { baseURL: string; apiKey: string; model: string },
  kind: HttpKind,
): Promise<ScenarioLoop> {
  await params.targets.recorder.clear();
  const loopFetch = createLoopFetch();
  const session = kind.kind === "chat" || kind.session !== false;
  const { authorization: _auth, ...headers } = loopHeaders(params, target.apiKey, session);
  const transport: TurnTransport =
    kind.kind === "chat"
      ? chatTransport({
          ...target,
          promptCacheKey: params.nonce,
          loopFetch,
          turnTimeoutMs: params.turnTimeoutMs,
        })
      : httpTransport({
          ...target,
          style: kind.style,
          ...(kind.store !== undefined ? { store: kind.store } : {}),
          promptCacheKey: params.nonce,
          headers,
          loopFetch,
          turnTimeoutMs: params.turnTimeoutMs,
        });
  return timedHttpLoop(params, loopFetch, transport);
}

/** Runs `transport`'s loop over `loopFetch` (closed after it) and attributes the recorder's traffic. */
async function timedHttpLoop(
  params: ScenarioRunParams,
  loopFetch: LoopFetch,
  transport: TurnTransport,
): Promise<ScenarioLoop> {
  try {
    const started = performance.now();
    const turns = await runAgentLoop(transport, { turns: params.turns, nonce: params.nonce });
    const loopMs = performance.now() - started;
    const client: ClientWire = loopFetch.stats();
    return {
      loopMs,
      connectMs: null,
      turns,
      client,
      deflate: null,
      upstream: await traffic(params.targets.recorder),
    };
  } finally {
    loopFetch.close();
  }
}

/**
 * A provider's own API called directly (issue #26): Anthropic Messages or Gemini
 * `streamGenerateContent`, the whole history every turn, with the loop headers the other direct
 * scenarios send (so header bytes stay comparable).
 */
async function providerLoop(
  params: ScenarioRunParams,
  provider: "anthropic" | "gemini",
): Promise<ScenarioLoop> {
  await params.targets.recorder.clear();
  const loopFetch = createLoopFetch();
  const { authorization: _auth, ...headers } = loopHeaders(params, SIM_KEY);
  const common = { apiKey: SIM_KEY, headers, loopFetch, turnTimeoutMs: params.turnTimeoutMs };
  const transport =
    provider === "anthropic"
      ? messagesTransport({
          ...common,
          baseURL: params.targets.simulatorBaseUrl,
          model: PROVIDER_MODELS.anthropic,
        })
      : geminiTransport({
          ...common,
          baseURL: params.targets.simulatorBaseUrl.replace(/\/v1$/, "/v1beta"),
          model: PROVIDER_MODELS.gemini,
        });
  return timedHttpLoop(params, loopFetch, transport);
}

/** Runs a WebSocket loop (connect, turns, close) and attributes the recorder's traffic to it. */
async function wsLoop(
  params: ScenarioRunParams,
  target: { baseURL: string; apiKey: string; model: string },
  behaviour: {
    store: boolean;
    drops: boolean;
    resume: "full" | "chain-or-full";
    chain?: boolean;
    /** Each socket asks Deltagate for a store:false grace window (README "store: false"). */
    grace?: boolean;
  },
): Promise<ScenarioLoop> {
  await params.targets.recorder.clear();
  const started = performance.now();
  const transport = wsTransport({
    url: wsUrl(target.baseURL),
    headers: {
      ...loopHeaders(params, target.apiKey),
      // A reconnecting client that continues its store:false chain asks Deltagate for a grace
      // window (README "store: false"); store:false is connection-local without it, as OpenAI's.
      ...(behaviour.grace ? { [STORE_FALSE_GRACE_HEADER]: "300000" } : {}),
    },
    perMessageDeflate: params.perMessageDeflate,
    model: target.model,
    store: behaviour.store,
    promptCacheKey: params.nonce,
    dropEvery: behaviour.drops ? params.reconnectEvery : 0,
    resume: behaviour.resume,
    chain: behaviour.chain ?? true,
    turnTimeoutMs: params.turnTimeoutMs,
    connectTimeoutMs: params.connectTimeoutMs,
  });
  try {
    await transport.open();
    const turns = await runAgentLoop(transport, { turns: params.turns, nonce: params.nonce });
    const loopMs = performance.now() - started;
    return {
      loopMs,
      connectMs: transport.connectMs(),
      turns,
      client: transport.wire(),
      deflate: transport.deflate(),
      upstream: await traffic(params.targets.recorder),
    };
  } finally {
    await transport.close();
  }
}

const direct = (p: ScenarioRunParams) => ({
  baseURL: p.targets.simulatorBaseUrl,
  apiKey: SIM_KEY,
  model: DIRECT_MODEL,
});
const DG: Via = { gateway: "deltagate", path: "proxy" };
const gateway = (p: ScenarioRunParams, api: keyof SlotModels, via: Via = DG) => ({
  baseURL: baseUrlOf(p.targets.gateways, via),
  apiKey: p.targets.deltagateApiKey,
  model: p.targets.models[api],
});

/** The scenarios, in report order. */
export const SCENARIOS: readonly Scenario[] = [
  {
    id: "A",
    label: "A: HTTP direct, full history",
    description:
      "POST /v1/responses (SSE) straight to the upstream, store:false; every turn re-sends the whole history (instructions, tools, every call and output).",
    versus: null,
    via: null,
    viaDeltagate: false,
    run: (p) => httpLoop(p, direct(p), { kind: "responses", style: "full-history" }),
  },
  {
    id: "A2",
    label: "A2: HTTP direct, store:true + previous_response_id",
    description:
      "POST /v1/responses (SSE) straight to the upstream with store:true; each turn sends previous_response_id, tools and only the new items.",
    versus: null,
    via: null,
    viaDeltagate: false,
    run: (p) => httpLoop(p, direct(p), { kind: "responses", style: "chained" }),
  },
  {
    id: "E",
    label: "E: upstream WebSocket mode direct",
    description:
      "One WebSocket straight to the upstream's Responses WebSocket mode, store:false; previous_response_id + the new items each turn (the chain lives in the connection's cache).",
    versus: null,
    via: null,
    viaDeltagate: false,
    run: (p) => wsLoop(p, direct(p), { store: false, drops: false, resume: "full" }),
  },
  {
    id: "CH",
    label: "CH: Chat Completions direct",
    description:
      "POST /v1/chat/completions (stream, usage) straight to the upstream; the whole conversation as messages every turn.",
    versus: null,
    via: null,
    viaDeltagate: false,
    run: (p) => httpLoop(p, direct(p), { kind: "chat" }),
  },
  {
    id: "DG-ws",
    label: "DG-ws: Deltagate WS → WS upstream",
    description:
      "One WebSocket to Deltagate, store:false, delta turns; Deltagate forwards the delta on its own warm WebSocket to the upstream's WebSocket mode.",
    versus: "E",
    via: DG,
    viaDeltagate: true,
    floor: "FL-ws",
    store: false,
    run: (p) => wsLoop(p, gateway(p, "ws"), { store: false, drops: false, resume: "chain-or-full" }),
  },
  {
    id: "DG-http",
    label: "DG-http: Deltagate WS → HTTP upstream",
    description:
      "One WebSocket to Deltagate, store:false, delta turns; Deltagate rebuilds the full context for a Responses HTTP/SSE upstream each turn.",
    versus: "E",
    via: DG,
    viaDeltagate: true,
    run: (p) => wsLoop(p, gateway(p, "http"), { store: false, drops: false, resume: "chain-or-full" }),
  },
  {
    id: "DG-h2ws",
    label: "DG-h2ws: Deltagate HTTP → WS upstream",
    description:
      "An HTTP-only client: POST /v1/responses (SSE) to Deltagate, store:true + previous_response_id + the new items; Deltagate forwards on its warm upstream WebSocket.",
    versus: "E",
    via: DG,
    viaDeltagate: true,
    run: (p) => httpLoop(p, gateway(p, "ws"), { kind: "responses", style: "chained" }),
  },
  {
    id: "DG-chat",
    label: "DG-chat: Deltagate WS → Chat Completions upstream",
    description:
      "One WebSocket to Deltagate, store:false, delta turns; Deltagate translates each turn into a full-history Chat Completions request.",
    versus: "CH",
    via: DG,
    viaDeltagate: true,
    run: (p) => wsLoop(p, gateway(p, "chat"), { store: false, drops: false, resume: "chain-or-full" }),
  },
  {
    id: "E-rc",
    label: "E-rc: E, socket dropped every K turns",
    description:
      "As E, but the socket dies after every K-th turn; the next turn opens a new socket and re-sends the whole history (the old connection's cache is gone; Codex does the same).",
    versus: null,
    via: null,
    viaDeltagate: false,
    run: (p) => wsLoop(p, direct(p), { store: false, drops: true, resume: "full" }),
  },
  {
    id: "DG-rc",
    label: "DG-rc: DG-ws store:false, socket dropped every K turns",
    description:
      "As DG-ws, socket dropped after every K-th turn; each socket asks for a 5-minute store:false grace window (x-deltagate-store-false-grace), so the new socket (same session-id) continues with previous_response_id, and re-sends the whole history only if that is refused.",
    versus: "E-rc",
    via: DG,
    viaDeltagate: true,
    run: (p) =>
      wsLoop(p, gateway(p, "ws"), { store: false, drops: true, resume: "chain-or-full", grace: true }),
  },
  {
    id: "DG-st-rc",
    label: "DG-st-rc: DG-ws store:true, socket dropped every K turns",
    description:
      "As DG-rc with store:true: the chain is stored, so the new socket always continues with previous_response_id.",
    versus: "E-rc",
    via: DG,
    viaDeltagate: true,
    run: (p) => wsLoop(p, gateway(p, "ws"), { store: true, drops: true, resume: "chain-or-full" }),
  },
  {
    id: "DG-sl-http",
    label: "DG-sl-http: stateless HTTP client (full history) → Deltagate",
    description:
      "As A, through Deltagate: POST /v1/responses (SSE) with the whole history every turn, no session header, no previous_response_id, store:true (the SDKs' default); Deltagate routes it by affinity, matches the resend and sends only the new items on its warm upstream WebSocket.",
    versus: "A",
    via: DG,
    viaDeltagate: true,
    run: (p) =>
      httpLoop(p, gateway(p, "ws"), {
        kind: "responses",
        style: "full-history",
        store: true,
        session: false,
      }),
  },
  {
    id: "DG-sl-ws",
    label: "DG-sl-ws: stateless WS client (full history) → Deltagate",
    description:
      "One WebSocket to Deltagate, store:false, the whole history every turn without previous_response_id (an SDK that does not chain); Deltagate matches each resend and sends only the new items upstream.",
    versus: "A",
    via: DG,
    viaDeltagate: true,
    run: (p) => wsLoop(p, gateway(p, "ws"), { store: false, drops: false, resume: "full", chain: false }),
  },
  {
    id: "DG-cx-rc",
    label: "DG-cx-rc: Codex-like, socket dropped every K turns, full resend → Deltagate",
    description:
      "As E-rc through Deltagate (same session-id): after each drop the new socket re-sends the whole history without previous_response_id, as Codex does; each socket asks for a 5-minute store:false grace window (x-deltagate-store-false-grace; Codex can send it with its provider's http_headers), so Deltagate still holds the chain, matches the resend to it and sends only the new items upstream.",
    versus: "E-rc",
    via: DG,
    viaDeltagate: true,
    run: (p) => wsLoop(p, gateway(p, "ws"), { store: false, drops: true, resume: "full", grace: true }),
  },
  ...floorScenarios(),
  ...providerScenarios(),
];

/**
 * Issue #26: the coding-agent loop from a Responses WebSocket client (DG-ws's) through Deltagate to
 * the simulator's Anthropic Messages endpoint with automatic cache breakpoints (AN-dg) and without
 * them (AN-nocache), and to its Gemini endpoint (GM-dg); and each provider's own API called
 * directly with the whole history every turn (AN-direct without `cache_control`, GM-direct with
 * Gemini's implicit caching).
 */
function providerScenarios(): Scenario[] {
  const through = (api: "an" | "anNoCache" | "gm"): Scenario["run"] => {
    return (p) => wsLoop(p, gateway(p, api), { store: false, drops: false, resume: "chain-or-full" });
  };
  return [
    {
      id: "AN-dg",
      label: "AN-dg: Deltagate WS → Anthropic Messages, automatic cache breakpoints",
      description:
        "One WebSocket to Deltagate, store:false, delta turns; Deltagate sends each turn as a full-history Messages request with its automatic cache_control breakpoints (the route's default).",
      versus: "AN-direct",
      via: DG,
      viaDeltagate: true,
      run: through("an"),
    },
    {
      id: "AN-nocache",
      label: "AN-nocache: AN-dg with cache_breakpoints: false",
      description:
        "As AN-dg through a route with cache_breakpoints: false: no cache_control, so every turn's prompt is prefilled whole.",
      versus: "AN-direct",
      via: DG,
      viaDeltagate: true,
      run: through("anNoCache"),
    },
    {
      id: "AN-direct",
      label: "AN-direct: Anthropic Messages direct, full history, no cache_control",
      description:
        "POST /v1/messages (stream) straight to the provider with the whole conversation every turn and no cache_control: what a Messages API user without prompt caching pays.",
      versus: null,
      via: null,
      viaDeltagate: false,
      run: (p) => providerLoop(p, "anthropic"),
    },
    {
      id: "GM-dg",
      label: "GM-dg: Deltagate WS → Gemini",
      description:
        "One WebSocket to Deltagate, store:false, delta turns; Deltagate sends each turn as a full-history streamGenerateContent request (thought signatures restored), read from Gemini's implicit cache.",
      versus: "GM-direct",
      via: DG,
      viaDeltagate: true,
      run: through("gm"),
    },
    {
      id: "GM-direct",
      label: "GM-direct: Gemini streamGenerateContent direct, full history",
      description:
        "POST /v1beta/models/{model}:streamGenerateContent?alt=sse straight to the provider with the whole conversation every turn (thought signatures kept), read from its implicit cache.",
      versus: null,
      via: null,
      viaDeltagate: false,
      run: (p) => providerLoop(p, "gemini"),
    },
  ];
}

/** A WebSocket loop without drops through `via` (DG-ws's client), store:false or store:true. */
function wsThrough(via: Via, store: boolean): Scenario["run"] {
  return (p) => wsLoop(p, gateway(p, "ws", via), { store, drops: false, resume: "chain-or-full" });
}

/**
 * The floor comparison (issue #27): DG-ws's client through the minimal relay (FL-*), through
 * Deltagate with store:true (DG-st) and without its log line (DG-nolog), and each of those and
 * DG-ws at the runtime's own port (`@rt`).
 */
function floorScenarios(): Scenario[] {
  const at = (gateway: Via["gateway"], rt: boolean): Via => ({ gateway, path: rt ? "runtime" : "proxy" });
  const out: Scenario[] = [];
  for (const rt of [false, true]) {
    const where = rt ? " at the runtime's port" : "";
    const suffix = rt ? "@rt" : "";
    const path = rt
      ? "to the runtime's own port (past wrangler dev's proxy, as a deployment is reached)"
      : "through wrangler dev's proxy (as every other Deltagate scenario)";
    if (rt) {
      out.push({
        id: "DG-ws@rt",
        label: "DG-ws@rt: DG-ws at the runtime's port",
        description: `As DG-ws, ${path}.`,
        versus: "E",
        via: at("deltagate", true),
        viaDeltagate: true,
        floor: "FL-ws@rt",
        store: false,
        run: wsThrough(at("deltagate", true), false),
      });
    }
    out.push(
      {
        id: `DG-st${suffix}` as ScenarioId,
        label: `DG-st${suffix}: Deltagate WS → WS upstream, store:true${where}`,
        description: `As DG-ws with store:true (each response committed before its terminal event is sent), ${path}.`,
        versus: "E",
        via: at("deltagate", rt),
        viaDeltagate: true,
        floor: `FL-st${suffix}` as ScenarioId,
        store: true,
        run: wsThrough(at("deltagate", rt), true),
      },
      {
        id: `FL-ws${suffix}` as ScenarioId,
        label: `FL-ws${suffix}: floor relay WS → WS upstream, store:false${where}`,
        description: `DG-ws's client and workload through the minimal relay of bench/floor/ (hibernation accept, one warm upstream socket, every frame parsed and re-stringified both ways, no SQLite write for a store:false response), ${path}.`,
        versus: "E",
        via: at("floor", rt),
        viaDeltagate: false,
        store: false,
        run: wsThrough(at("floor", rt), false),
      },
      {
        id: `FL-st${suffix}` as ScenarioId,
        label: `FL-st${suffix}: floor relay, store:true${where}`,
        description: `As FL-ws${suffix} with store:true: the relay writes each terminal event to SQLite before it forwards it (the output gate holds the send until the write is durable).`,
        versus: "E",
        via: at("floor", rt),
        viaDeltagate: false,
        store: true,
        run: wsThrough(at("floor", rt), true),
      },
      {
        id: `DG-nolog${suffix}` as ScenarioId,
        label: `DG-nolog${suffix}: DG-ws with TURN_LOG=0${where}`,
        description: `As DG-ws${suffix} through a second Deltagate started with TURN_LOG=0 (no per-turn log line), ${path}.`,
        versus: "E",
        via: at("deltagate-nolog", rt),
        viaDeltagate: true,
        floor: `FL-ws${suffix}` as ScenarioId,
        store: false,
        run: wsThrough(at("deltagate-nolog", rt), false),
      },
    );
  }
  return out;
}

/** The scenario with `id`. @throws {Error} for an unknown id. */
export function scenarioById(id: ScenarioId): Scenario {
  const scenario = SCENARIOS.find((s) => s.id === id);
  if (!scenario) throw new Error(`unknown scenario ${id}`);
  return scenario;
}
