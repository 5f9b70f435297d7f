/**
 * The benchmark's processes: one reference simulator per model-time setting a run uses (in the
 * benchmark's process, permessage-deflate accepted as a provider would), an edge → provider link
 * proxy per far upstream, and Deltagate under `wrangler dev` (scripts/local-stack.ts, a frozen
 * snapshot of the Worker) with a routing table that sends each upstream slot's models to it:
 * `bench-<slot>-ws` → Responses WebSocket, `bench-<slot>-http` → Responses HTTP,
 * `bench-<slot>-chat` → Chat Completions.
 * Owns their lifetimes: `stop()` ends them all (local-stack also kills wrangler on process exit).
 * Invariant: Deltagate's configuration is the default one except the routing table and model
 * list; no Deltagate setting is tuned for the benchmark (the routes set no `idle_ms`). Its
 * Durable Object storage is on tmpfs by default (`BENCH_STORAGE`; why and which way it leans:
 * bench/README.md "Storage"), removed with the stack.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { freePort, LOCAL_DEV_KEY, type LocalStack, startLocalStack } from "../scripts/local-stack.ts";
import { type RunningSimulator, startSimulator } from "../simulator/server.ts";
import { type LinkProxy, startLinkProxy } from "./link-proxy.ts";
import type { LinkSpec } from "./link-spec.ts";
import { MODEL_TIMES, type ModelTimeId } from "./model-time.ts";
import { fileSystemOf } from "./proc-stats.ts";
import type { ProfileStackView } from "./profiles.ts";

/** Connections the edge → provider proxy accepts (one warm upstream socket per session, at most). */
const BACKBONE_MAX_CONNECTIONS = 4_096;

/** One upstream a profile (or the load mode) uses. */
export interface UpstreamNeed {
  key: string;
  modelTime: ModelTimeId;
  /** The edge → provider link; null = loopback. */
  edgeProvider: LinkSpec | null;
}

/** A started upstream slot. */
export interface UpstreamSlot extends UpstreamNeed {
  simulator: RunningSimulator;
  backbone: LinkProxy | null;
  models: { ws: string; http: string; chat: string };
}

/** Where the Durable Objects' storage goes (`BENCH_STORAGE`, bench/README.md "Storage"). */
export type StorageChoice = "tmpfs" | "disk";

/** The tmpfs the benchmark puts Durable Object storage on when asked to (Linux's shared memory). */
const TMPFS_DIR = "/dev/shm";

/** The running stack. */
export interface BenchStack {
  deltagate: LocalStack;
  /** Where Durable Object storage lives: its directory and the file system under it. */
  storage: { dir: string | null; fileSystem: string | null };
  slots: Map<string, UpstreamSlot>;
  /** The `UPSTREAMS` routing table Deltagate runs with (JSON). */
  routes: string;
  /** The view a profile needs of slot `key`. @throws {Error} for an unknown key. */
  viewFor(key: string): ProfileStackView;
  /** Stops everything. Idempotent; never throws. */
  stop(): Promise<void>;
}

/**
 * Starts the simulators, the backbone proxies and Deltagate.
 * @throws {Error} when anything fails to start (what was started is stopped first).
 */
export async function startBenchStack(
  needs: UpstreamNeed[],
  verbose: boolean,
  storage: StorageChoice = "tmpfs",
): Promise<BenchStack> {
  const simulators = new Map<ModelTimeId, RunningSimulator>();
  const slots = new Map<string, UpstreamSlot>();
  let deltagate: LocalStack | null = null;
  // tmpfs when asked and available; else local-stack's default (a directory under the temp dir).
  const stateDir =
    storage === "tmpfs" && fileSystemOf(TMPFS_DIR) === "tmpfs"
      ? mkdtempSync(`${TMPFS_DIR}/deltagate-bench-`)
      : null;
  const removeState = () => {
    if (stateDir) rmSync(stateDir, { recursive: true, force: true });
  };
  process.once("exit", removeState); // tmpfs is memory: never leave it behind
  const stop = async (): Promise<void> => {
    await deltagate?.stop();
    await Promise.all([...slots.values()].map((s) => s.backbone?.close()));
    await Promise.all([...simulators.values()].map((s) => s.close()));
    removeState();
  };
  try {
    for (const need of needs) {
      if (slots.has(need.key)) continue;
      let simulator = simulators.get(need.modelTime);
      if (!simulator) {
        simulator = await startSimulator({
          port: 0,
          host: "127.0.0.1",
          quiet: !verbose,
          ...MODEL_TIMES[need.modelTime],
          wsPerMessageDeflate: true,
        });
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
        models: { ws: `${base}-ws`, http: `${base}-http`, chat: `${base}-chat` },
      });
    }
    const routes = [...slots.values()].flatMap((slot) => {
      const baseUrl = `${slot.backbone?.origin ?? slot.simulator.url}/v1`;
      const route = { base_url: baseUrl, api_key_var: "UPSTREAM_API_KEY" };
      return [
        { model: slot.models.ws, api: "responses-ws", ...route },
        { model: slot.models.http, api: "responses-http", ...route },
        { model: slot.models.chat, api: "chat-completions", ...route },
      ];
    });
    const first = [...simulators.values()][0];
    if (!first) throw new Error("the benchmark needs at least one upstream");
    const routesJson = JSON.stringify(routes);
    deltagate = await startLocalStack({
      port: await freePort(),
      simulatorPort: 0,
      upstreamBaseUrl: `${first.url}/v1`,
      upstreamApiKey: "sim-key",
      verbose,
      vars: { UPSTREAMS: routesJson, MODELS: routes.map((r) => r.model).join(",") },
      // Others may save files while the bench runs: a reload would drop the loops' sockets.
      snapshot: true,
      ...(stateDir ? { persistTo: stateDir } : {}),
    });
    const stack = deltagate;
    return {
      deltagate: stack,
      storage: { dir: stateDir, fileSystem: fileSystemOf(stateDir ?? tmpdir()) },
      slots,
      routes: routesJson,
      viewFor(key) {
        const slot = slots.get(key);
        if (!slot) throw new Error(`no upstream slot ${key}`);
        return {
          deltagateBaseUrl: stack.baseUrl,
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
