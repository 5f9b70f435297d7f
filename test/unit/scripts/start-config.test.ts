/**
 * What `npm start` takes from its environment (scripts/start-config.ts): every setting and the
 * secrets its routing table names, nothing else; and the demo command printed in its banner.
 */
import { describe, expect, it } from "vitest";
import { demoCommand, forwardedSettings } from "../../../scripts/start-config.ts";
import { SETTING_NAMES } from "../../../src/config/settings.ts";

describe("forwardedSettings", () => {
  it("forwards every set setting and the UPSTREAMS secrets, even empty, and nothing else", () => {
    const env: NodeJS.ProcessEnv = {
      HOME: "/home/x",
      PATH: "/bin",
      PORT: "1",
      ROUTE_KEY: "k",
      OTHER_KEY: "o",
    };
    for (const name of SETTING_NAMES) env[name] = `value of ${name}`;
    env.UPSTREAMS = JSON.stringify([{ model: "*", api_key_var: "ROUTE_KEY" }]);
    env.MODELS = "";
    const forwarded = forwardedSettings(env);
    expect(Object.keys(forwarded).sort()).toEqual([...SETTING_NAMES, "ROUTE_KEY"].sort());
    expect(forwarded.UPSTREAM_API).toBe("value of UPSTREAM_API");
    expect(forwarded.MODELS).toBe("");
    expect(forwarded.ROUTE_KEY).toBe("k");
  });

  it("leaves unset settings out, so the defaults apply", () => {
    expect(forwardedSettings({ UPSTREAM_API: "responses-ws" })).toEqual({ UPSTREAM_API: "responses-ws" });
  });
});

describe("demoCommand", () => {
  const local = { baseUrl: "http://127.0.0.1:8787/v1", customKeys: false, model: "deltagate-sim" };

  it("is plain `npm run demo` for the defaults", () => {
    expect(demoCommand(local)).toBe("npm run demo");
  });

  it("names the URL for another port, a placeholder for custom keys, and a real model", () => {
    expect(demoCommand({ ...local, baseUrl: "http://127.0.0.1:9999/v1" })).toBe(
      "DELTAGATE_URL=http://127.0.0.1:9999/v1 npm run demo",
    );
    expect(demoCommand({ baseUrl: "http://127.0.0.1:9999/v1", customKeys: true, model: "gpt-5.1" })).toBe(
      "DELTAGATE_URL=http://127.0.0.1:9999/v1 DELTAGATE_API_KEY=<one of your DELTAGATE_API_KEYS keys> MODEL=gpt-5.1 npm run demo",
    );
  });
});
