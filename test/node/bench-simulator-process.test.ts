/**
 * The benchmark's simulator runs in a process of its own (bench/simulator-process.ts, issue #27):
 * not the benchmark's process, reachable over HTTP, its recorder read and cleared over the
 * inspection API, and gone after `close()`.
 */
import { describe, expect, it } from "vitest";
import { startSimulatorProcess } from "../../bench/simulator-process.ts";

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe("the benchmark's simulator process", () => {
  it("serves from another process, its recorder read over HTTP, and ends on close", async () => {
    const sim = await startSimulatorProcess({ wsPerMessageDeflate: true }, false);
    try {
      expect(sim.pid).not.toBeNull();
      expect(sim.pid).not.toBe(process.pid);
      const response = await fetch(`${sim.url}/v1/responses`, {
        method: "POST",
        headers: { authorization: "Bearer sim-key", "content-type": "application/json" },
        body: JSON.stringify({ model: "m", input: "hello", store: false }),
      });
      expect(response.status).toBe(200);
      await response.text();
      const records = await sim.recorder.list();
      expect(records.map((r) => [r.transport, (r.body as { input?: unknown }).input])).toEqual([
        ["http", "hello"],
      ]);
      await sim.recorder.clear();
      expect(await sim.recorder.list()).toEqual([]);
    } finally {
      await sim.close();
    }
    expect(alive(sim.pid!)).toBe(false);
  }, 30_000);
});
