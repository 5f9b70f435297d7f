/**
 * The benchmark's settings, pure parts (bench/config.ts): which scenarios each profile runs
 * (`BENCH_SCENARIOS`, entries for every profile or, as `profile/ID`, for one; a profile none is
 * for runs its defaults; A always), and `BENCH_LOAD_SESSIONS=0` meaning no load mode. The smoke
 * run (bench-smoke.test.ts) runs two profiles with entries for one. No processes, no timings.
 */
import { describe, expect, it } from "vitest";
import { loadConfig, scenariosFor } from "../../bench/config.ts";
import { parseLinkSpec } from "../../bench/link-spec.ts";
import { profileDefs } from "../../bench/profiles.ts";

const defs = profileDefs(parseLinkSpec("rtt=40ms,up=2mbit,down=20mbit"));
const zero = defs.find((d) => d.id === "zero")!;
const providers = defs.find((d) => d.id === "providers")!;

describe("BENCH_SCENARIOS", () => {
  it("runs each profile's defaults when unset", () => {
    const { BENCH_SCENARIOS } = loadConfig({});
    expect(BENCH_SCENARIOS).toBeUndefined();
    expect(scenariosFor(providers, BENCH_SCENARIOS)).toEqual(["A", ...providers.defaultScenarios]);
  });

  it("runs plain entries in every profile, with A added, in the scenarios' order", () => {
    const { BENCH_SCENARIOS } = loadConfig({ BENCH_SCENARIOS: "dg-ws, E" });
    expect(scenariosFor(zero, BENCH_SCENARIOS)).toEqual(["A", "E", "DG-ws"]);
    expect(scenariosFor(providers, BENCH_SCENARIOS)).toEqual(["A", "E", "DG-ws"]);
  });

  it("runs a `profile/ID` entry in that profile only; a profile no entry is for runs its defaults", () => {
    const { BENCH_SCENARIOS } = loadConfig({ BENCH_SCENARIOS: "zero/DG-ws,Zero/fl-ws" });
    expect(BENCH_SCENARIOS).toEqual([
      { profile: "zero", id: "DG-ws" },
      { profile: "zero", id: "FL-ws" },
    ]);
    expect(scenariosFor(zero, BENCH_SCENARIOS)).toEqual(["A", "DG-ws", "FL-ws"]);
    expect(scenariosFor(providers, BENCH_SCENARIOS)).toEqual(["A", ...providers.defaultScenarios]);
  });

  it("refuses an unknown profile or scenario, naming the entry", () => {
    expect(() => loadConfig({ BENCH_SCENARIOS: "nowhere/DG-ws" })).toThrow(
      /nowhere\/DG-ws: no profile nowhere/,
    );
    expect(() => loadConfig({ BENCH_SCENARIOS: "zero/XX" })).toThrow(/zero\/XX: no such scenario/);
    expect(() => loadConfig({ BENCH_SCENARIOS: "XX" })).toThrow(/XX: no such scenario/);
  });
});

describe("BENCH_LOAD_SESSIONS", () => {
  it("0 is no load step", () => {
    expect(loadConfig({ BENCH_LOAD_SESSIONS: "0" }).BENCH_LOAD_SESSIONS).toEqual([]);
    expect(loadConfig({}).BENCH_LOAD_SESSIONS).toEqual([1000]);
  });
});
