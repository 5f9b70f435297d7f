/**
 * The benchmark's floor relay (bench/floor/): it must be what the bench says it is, or "Deltagate
 * over the floor" means nothing.
 * - it runs on Deltagate's compatibility date, and routes only Responses WebSocket routes;
 * - under `wrangler dev` (as bench/stack.ts runs it): an upgrade without its key is refused; a
 *   turn is relayed both ways (the upstream gets the client's frame, the client the terminal
 *   event); a store:true response's terminal event is in the session's SQLite afterwards and a
 *   store:false one's is not.
 * Never a timing.
 */
import { readdirSync, readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { parseFloorRoutes } from "../../bench/floor/routes.ts";
import { type LocalStack, REPO_ROOT, startLocalStack } from "../../scripts/local-stack.ts";
import { type RunningSimulator, startSimulator } from "../../simulator/server.ts";

const KEY = "floor-test-key";
const MODEL = "floor-test-ws";

function compatibilityDate(path: string): string | undefined {
  return /^compatibility_date\s*=\s*"([^"]+)"/m.exec(readFileSync(join(REPO_ROOT, path), "utf8"))?.[1];
}

/** Every file under `dir` whose name ends with `suffix`. */
function filesUnder(dir: string, suffix: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: "utf8" })
    .filter((name) => name.endsWith(suffix))
    .map((name) => join(dir, name));
}

describe("the floor relay's configuration", () => {
  it("runs on Deltagate's compatibility date", () => {
    const date = compatibilityDate("wrangler.toml");
    expect(date).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(compatibilityDate("bench/floor/wrangler.toml")).toBe(date);
  });

  it("routes Responses WebSocket routes only, and warms the first", () => {
    const routes = parseFloorRoutes(
      JSON.stringify([
        { model: "a-http", api: "responses-http", base_url: "http://h/v1" },
        { model: "a-ws", api: "responses-ws", base_url: "http://one/v1/" },
        { model: "b-ws", api: "responses-ws", base_url: "http://two/v1" },
      ]),
    );
    expect([...routes.byModel]).toEqual([
      ["a-ws", "http://one/v1/responses"],
      ["b-ws", "http://two/v1/responses"],
    ]);
    expect(routes.first).toBe("http://one/v1/responses");
    expect(() => parseFloorRoutes("{}")).toThrow(/array/);
    expect(() => parseFloorRoutes('[{"api":"responses-ws"}]')).toThrow(/model/);
  });
});

describe("the floor relay under wrangler dev", () => {
  let simulator: RunningSimulator;
  let stack: LocalStack | null = null;
  let state: string;

  beforeAll(async () => {
    simulator = await startSimulator({ port: 0, quiet: true });
    state = await mkdtemp(join(tmpdir(), "deltagate-floor-"));
    const upstream = `${simulator.url}/v1`;
    stack = await startLocalStack({
      port: 0,
      simulatorPort: 0,
      upstreamBaseUrl: upstream,
      upstreamApiKey: "sim-key",
      verbose: false,
      snapshot: true,
      persistTo: state,
      worker: { config: "bench/floor/wrangler.toml", sources: ["bench/floor"] },
      vars: {
        UPSTREAMS: JSON.stringify([{ model: MODEL, api: "responses-ws", base_url: upstream }]),
        FLOOR_API_KEY: KEY,
      },
    });
  }, 120_000);

  afterAll(async () => {
    await stack?.stop();
    await simulator?.close();
    await rm(state, { recursive: true, force: true });
  });

  const url = () => `${stack!.baseUrl.replace(/^http/, "ws")}/responses`;

  it("refuses an upgrade without its key", async () => {
    const status = await new Promise<number>((resolve, reject) => {
      const ws = new WebSocket(url(), { headers: { authorization: "Bearer not-the-key" } });
      ws.once("unexpected-response", (_req, res) => resolve(res.statusCode ?? 0));
      ws.once("open", () => reject(new Error("opened without the key")));
      ws.once("error", () => {});
    });
    expect(status).toBe(401);
  });

  it("relays each turn both ways and keeps a store:true response in SQLite, a store:false one not", async () => {
    const ws = new WebSocket(url(), {
      headers: { authorization: `Bearer ${KEY}`, "session-id": "floor-e2e" },
    });
    await new Promise<void>((resolve, reject) => {
      ws.once("open", () => resolve());
      ws.once("error", reject);
    });
    const events: Array<{ type: string; response?: { id: string; store?: boolean } }> = [];
    ws.on("message", (data) => events.push(JSON.parse(String(data)) as (typeof events)[number]));
    const turn = async (store: boolean, text: string): Promise<string> => {
      const before = events.length;
      ws.send(
        JSON.stringify({
          type: "response.create",
          model: MODEL,
          store,
          input: [{ type: "message", role: "user", content: text }],
        }),
      );
      await expect
        .poll(() => events.slice(before).find((e) => e.type === "response.completed" || e.type === "error"), {
          timeout: 15_000,
        })
        .toBeDefined();
      const done = events.slice(before).find((e) => e.type === "response.completed");
      expect(done?.response?.store, JSON.stringify(events.slice(before))).toBe(store);
      return done!.response!.id;
    };
    const kept = await turn(true, "keep this one");
    const notKept = await turn(false, "not this one");
    ws.close();
    // The upstream got each client frame, parsed and re-stringified (the same JSON).
    const frames = simulator.recorder.list().filter((r) => r.transport === "ws");
    expect(frames.map((r) => (r.body as { store?: boolean }).store)).toEqual([true, false]);
    // Stopped first, so workerd has closed the session's database.
    await stack!.stop();
    stack = null;
    const stored = filesUnder(state, ".sqlite").flatMap((file) => {
      const db = new DatabaseSync(file);
      try {
        const table = db.prepare("SELECT name FROM sqlite_master WHERE name = 'responses'").get();
        return table ? db.prepare("SELECT id, event FROM responses").all() : [];
      } finally {
        db.close();
      }
    }) as Array<{ id: string; event: string }>;
    expect(stored.map((row) => row.id)).toEqual([kept]);
    expect(stored.map((row) => row.id)).not.toContain(notKept);
    expect(JSON.parse(stored[0]!.event)).toMatchObject({
      type: "response.completed",
      response: { id: kept },
    });
  }, 60_000);
});
