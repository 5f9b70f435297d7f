/**
 * The benchmark's processes: one reference simulator per model-time setting a run uses, each in a
 * process of its own (simulator-process.ts; permessage-deflate accepted as a provider would), an
 * edge → provider link proxy per far upstream, and the gateways (gateways.ts), each its own
 * `wrangler dev` (scripts/local-stack.ts, a frozen snapshot of the Worker): Deltagate always,
 * and when the chosen scenarios need them Deltagate with `TURN_LOG=0` and the floor relay of
 * bench/floor/. Every gateway gets the same routing table, which sends each upstream slot's models
 * to it: `bench-<slot>-ws` → Responses WebSocket, `bench-<slot>-http` → Responses HTTP,
 * `bench-<slot>-chat` → Chat Completions, `bench-<slot>-an` → Anthropic Messages (automatic cache
 * breakpoints), `bench-<slot>-an-nocache` → the same without breakpoints, `bench-<slot>-gm` →
 * Gemini (issue #26; the floor relays only the first kind).
 * Owns their lifetimes: `stop()` ends them all (local-stack also kills wrangler on process exit,
 * simulator-process its child).
 * Invariants: Deltagate's configuration is the default one except the routing table and model
 * list (and `TURN_LOG` for its log-less twin); no Deltagate setting is tuned for the benchmark (the
 * routes set no `idle_ms`). Every gateway runs under the same wrangler, environment and
 * compatibility date, its Durable Object storage on the same file system: tmpfs by default
 * (`BENCH_STORAGE`; why and which way it leans: bench/README.md "Storage"), removed with the stack.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import {
  freePort,
  LOCAL_DEV_KEY,
  type LocalStack,
  type LocalStackOptions,
  startLocalStack,
} from "../scripts/local-stack.ts";
import type { GatewayId, GatewayTargets, GatewayUrls } from "./gateways.ts";
import { type LinkProxy, startLinkProxy } from "./link-proxy.ts";
import type { LinkSpec } from "./link-spec.ts";
import { MODEL_TIMES, type ModelTimeId } from "./model-time.ts";
import { fileSystemOf, type StackCpu, stackCpuMs, workerdRssBytes } from "./proc-stats.ts";
import type { ProfileStackView } from "./profiles.ts";
import { type SimulatorProcess, startSimulatorProcess } from "./simulator-process.ts";

/** Connections the edge → provider proxy accepts (one warm upstream socket per session, at most). */
const BACKBONE_MAX_CONNECTIONS = 4_096;

/** The floor relay's Worker (bench/floor/), as scripts/local-stack.ts runs it. */
const FLOOR_WORKER = { config: "bench/floor/wrangler.toml", sources: ["bench/floor"] } as const;

/** One upstream a profile (or the load mode) uses. */
export interface UpstreamNeed {
  key: string;
  modelTime: ModelTimeId;
  /** The edge → provider link; null = loopback. */
  edgeProvider: LinkSpec | null;
}

/** A started upstream slot. */
export interface UpstreamSlot extends UpstreamNeed {
  simulator: SimulatorProcess;
  backbone: LinkProxy | null;
  models: SlotModels;
}

/**
 * Deltagate model ids routed to one upstream slot, per upstream API: Responses WebSocket and HTTP,
 * Chat Completions, Anthropic Messages with automatic cache breakpoints (`an`) and without them
 * (`anNoCache`, `cache_breakpoints: false`), Gemini (`gm`).
 */
export interface SlotModels {
  ws: string;
  http: string;
  chat: string;
  an: string;
  anNoCache: string;
  gm: string;
}

/**
 * The provider model ids the Anthropic and Gemini routes name upstream (`upstream_model`), as the
 * simulator serves them (`claude-*`, `gemini-*`: simulator/anthropic/messages.ts,
 * simulator/gemini/generate.ts). The Gemini one is a Gemini 3 model, which refuses a function
 * call sent back without its thought signature, so the loop exercises that round trip.
 */
export const PROVIDER_MODELS = { anthropic: "claude-sim-1", gemini: "gemini-3-flash-sim" } as const;

/** Where the Durable Objects' storage goes (`BENCH_STORAGE`, bench/README.md "Storage"). */
export type StorageChoice = "tmpfs" | "disk";

/** The tmpfs the benchmark puts Durable Object storage on when asked to (Linux's shared memory). */
const TMPFS_DIR = "/dev/shm";

/** One running gateway. */
export interface GatewayStack {
  id: GatewayId;
  local: LocalStack;
  /** Its `…/v1` base URLs: wrangler dev's proxy, and the runtime's own port (null: not found). */
  urls: GatewayUrls;
  /** Cumulative CPU of its `wrangler dev`, split by process (proc-stats.ts); null off Linux. */
  cpu(): StackCpu | null;
  /** Resident memory of its workerd processes, bytes; null off Linux. */
  rss(): number | null;
}

/** The running stack. */
export interface BenchStack {
  /** Deltagate with default settings (always started). */
  deltagate: GatewayStack;
  gateways: ReadonlyMap<GatewayId, GatewayStack>;
  /** Where Durable Object storage lives: its directory and the file system under it. */
  storage: { dir: string | null; fileSystem: string | null };
  slots: Map<string, UpstreamSlot>;
  /** The `UPSTREAMS` routing table every gateway runs with (JSON). */
  routes: string;
  /** The view a profile needs of slot `key`. @throws {Error} for an unknown key. */
  viewFor(key: string): ProfileStackView;
  /** Stops everything. Idempotent; never throws. */
  stop(): Promise<void>;
}

/** How to start the stack. */
export interface BenchStackOptions {
  verbose: boolean;
  storage: StorageChoice;
  /** Gateways besides Deltagate to start ("deltagate" itself always is). */
  gateways: readonly GatewayId[];
}

/** Picks `count` distinct free ports (freePort releases each before it returns). */
async function distinctPorts(count: number): Promise<number[]> {
  const ports = new Set<number>();
  while (ports.size < count) ports.add(await freePort());
  return [...ports];
}

/**
 * Starts the simulators, the backbone proxies and the gateways.
 * @throws {Error} when anything fails to start (what was started is stopped first).
 */
export async function startBenchStack(
  needs: UpstreamNeed[],
  options: BenchStackOptions,
): Promise<BenchStack> {
  const { verbose } = options;
  const simulators = new Map<ModelTimeId, SimulatorProcess>();
  const slots = new Map<string, UpstreamSlot>();
  const gateways = new Map<GatewayId, GatewayStack>();
  const locals: LocalStack[] = [];
  // tmpfs when asked and available; else local-stack's default (a directory under the temp dir).
  const onTmpfs = options.storage === "tmpfs" && fileSystemOf(TMPFS_DIR) === "tmpfs";
  const stateDirs: string[] = [];
  const newStateDir = (): string | null => {
    if (!onTmpfs) return null;
    const dir = mkdtempSync(`${TMPFS_DIR}/deltagate-bench-`);
    stateDirs.push(dir);
    return dir;
  };
  const removeState = () => {
    for (const dir of stateDirs) rmSync(dir, { recursive: true, force: true });
  };
  process.once("exit", removeState); // tmpfs is memory: never leave it behind
  const stop = async (): Promise<void> => {
    await Promise.all(locals.map((l) => l.stop()));
    await Promise.all([...slots.values()].map((s) => s.backbone?.close()));
    await Promise.all([...simulators.values()].map((s) => s.close()));
    removeState();
  };
  try {
    for (const need of needs) {
      if (slots.has(need.key)) continue;
      let simulator = simulators.get(need.modelTime);
      if (!simulator) {
        simulator = await startSimulatorProcess(
          { ...MODEL_TIMES[need.modelTime], wsPerMessageDeflate: true },
          verbose,
        );
        simulators.set(need.modelTime, simulator);
      }
      const backbone = need.edgeProvider
        ? await startLinkProxy({
            targetPort: simulator.port,
            spec: need.edgeProvider,
            maxConnections: BACKBONE_MAX_CONNECTIONS,
          })
        : null;
      const base = `bench-${need.key}`;
      slots.set(need.key, {
        ...need,
        simulator,
        backbone,
        models: {
          ws: `${base}-ws`,
          http: `${base}-http`,
          chat: `${base}-chat`,
          an: `${base}-an`,
          anNoCache: `${base}-an-nocache`,
          gm: `${base}-gm`,
        },
      });
    }
    const routes = [...slots.values()].flatMap((slot) => {
      const origin = slot.backbone?.origin ?? slot.simulator.url;
      const route = { base_url: `${origin}/v1`, api_key_var: "UPSTREAM_API_KEY" };
      const anthropic = { ...route, api: "anthropic-messages", upstream_model: PROVIDER_MODELS.anthropic };
      return [
        { model: slot.models.ws, api: "responses-ws", ...route },
        { model: slot.models.http, api: "responses-http", ...route },
        { model: slot.models.chat, api: "chat-completions", ...route },
        // Issue #26: the provider routes (their defaults: automatic cache breakpoints on).
        { model: slot.models.an, ...anthropic },
        { model: slot.models.anNoCache, ...anthropic, cache_breakpoints: false },
        {
          model: slot.models.gm,
          api: "gemini",
          base_url: `${origin}/v1beta`,
          api_key_var: "UPSTREAM_API_KEY",
          upstream_model: PROVIDER_MODELS.gemini,
        },
      ];
    });
    const first = [...simulators.values()][0];
    if (!first) throw new Error("the benchmark needs at least one upstream");
    const routesJson = JSON.stringify(routes);
    const deltagateVars = { UPSTREAMS: routesJson, MODELS: routes.map((r) => r.model).join(",") };
    const wanted: GatewayId[] = ["deltagate", ...options.gateways.filter((g) => g !== "deltagate")];
    const ports = await distinctPorts(wanted.length);
    const stateDir = newStateDir();
    const variant = (id: GatewayId): Partial<LocalStackOptions> => {
      if (id === "deltagate-nolog") return { vars: { ...deltagateVars, TURN_LOG: "0" } };
      if (id === "floor")
        return { vars: { UPSTREAMS: routesJson, FLOOR_API_KEY: LOCAL_DEV_KEY }, worker: FLOOR_WORKER };
      return { vars: deltagateVars };
    };
    // Started together (each wrangler spends most of its start waiting); any failure stops all.
    const started = await Promise.allSettled(
      wanted.map(async (id, i) => {
        const persistTo = id === "deltagate" ? stateDir : newStateDir();
        const local = await startLocalStack({
          port: ports[i]!,
          simulatorPort: 0,
          upstreamBaseUrl: `${first.url}/v1`,
          upstreamApiKey: "sim-key",
          verbose,
          // Others may save files while the bench runs: a reload would drop the loops' sockets.
          snapshot: true,
          ...(persistTo ? { persistTo } : {}),
          ...variant(id),
        });
        locals.push(local);
        return { id, local };
      }),
    );
    const failed = started.find((s) => s.status === "rejected");
    if (failed) throw failed.reason;
    for (const result of started) {
      if (result.status !== "fulfilled") continue;
      const { id, local } = result.value;
      const runtime = await local.runtimeOrigin().catch(() => null);
      const group = local.processGroup;
      const proxyPort = Number(new URL(local.origin).port);
      gateways.set(id, {
        id,
        local,
        urls: { proxy: local.baseUrl, runtime: runtime ? `${runtime}/v1` : null },
        cpu: () => (group === null ? null : stackCpuMs(group, proxyPort)),
        rss: () => (group === null ? null : workerdRssBytes(group)),
      });
    }
    const deltagate = gateways.get("deltagate")!;
    const targets: GatewayTargets = Object.fromEntries([...gateways].map(([id, g]) => [id, g.urls]));
    return {
      deltagate,
      gateways,
      storage: { dir: stateDir, fileSystem: fileSystemOf(stateDir ?? tmpdir()) },
      slots,
      routes: routesJson,
      viewFor(key) {
        const slot = slots.get(key);
        if (!slot) throw new Error(`no upstream slot ${key}`);
        return {
          gateways: targets,
          deltagateApiKey: LOCAL_DEV_KEY,
          simulatorUrl: slot.simulator.url,
          recorder: slot.simulator.recorder,
          models: slot.models,
          backbone: slot.backbone,
        };
      },
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
