/**
 * The list of the Worker's settings (src/config/settings.ts) is exactly what `parseConfig` reads,
 * so tooling that forwards the list (`npm start`) forwards every setting; and the secrets a
 * routing table names are found.
 */
import { describe, expect, it } from "vitest";
import { parseConfig } from "../../../src/config/config.ts";
import type { Env } from "../../../src/config/env.ts";
import { routeSecretNames, SETTING_NAMES } from "../../../src/config/settings.ts";

/** An `Env` that records every variable read from it. */
function recordingEnv(values: Record<string, string>): { env: Env; read: Set<string> } {
  const read = new Set<string>();
  const env = new Proxy(values, {
    get(target, name) {
      if (typeof name === "string") read.add(name);
      return typeof name === "string" ? target[name] : undefined;
    },
  }) as unknown as Env;
  return { env, read };
}

describe("SETTING_NAMES", () => {
  it("is every variable parseConfig reads, besides the secrets UPSTREAMS names", () => {
    const routes = [
      { model: "*", api: "responses-http", base_url: "http://127.0.0.1:1/v1", api_key_var: "KEY_X" },
    ];
    const { env, read } = recordingEnv({ UPSTREAMS: JSON.stringify(routes), KEY_X: "secret" });
    parseConfig(env);
    // `AI` is a binding (Workers AI, for the llama-guard classifier), not a setting.
    const settings = [...read].filter((name) => name !== "KEY_X" && name !== "AI");
    expect(settings.sort()).toEqual([...SETTING_NAMES].sort());
    expect(read.has("KEY_X")).toBe(true);
  });
});

describe("routeSecretNames", () => {
  it("names each api_key_var of the table once", () => {
    const table = JSON.stringify([
      { model: "a", api_key_var: "K1" },
      { model: "b" },
      { model: "c", api_key_var: "K2" },
      { model: "d", api_key_var: "K1" },
    ]);
    expect(routeSecretNames(table)).toEqual(["K1", "K2"]);
  });

  it("names none for no table, a table that is not JSON or not an array, or odd entries", () => {
    expect(routeSecretNames(undefined)).toEqual([]);
    expect(routeSecretNames("")).toEqual([]);
    expect(routeSecretNames("[{")).toEqual([]);
    expect(routeSecretNames('{"api_key_var":"K"}')).toEqual([]);
    expect(routeSecretNames('[null, 3, "x", {"api_key_var": 5}, {"api_key_var": ""}]')).toEqual([]);
  });
});

describe("store:false and keepalive defaults (issue #17)", () => {
  it("keeps store:false connection-local, lets a client ask for up to 5 minutes, keepalive after 30 s", () => {
    const config = parseConfig({} as Env);
    expect(config.storeFalseGraceMs).toBe(0);
    expect(config.storeFalseGraceMaxMs).toBe(300_000);
    expect(config.keepaliveMs).toBe(30_000);
    const tuned = parseConfig({ STORE_FALSE_GRACE_MS: "1000", STORE_FALSE_GRACE_MAX_MS: "0" } as Env);
    expect([tuned.storeFalseGraceMs, tuned.storeFalseGraceMaxMs]).toEqual([1_000, 0]);
  });
});
