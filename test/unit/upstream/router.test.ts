/**
 * The session's upstream router (src/upstream/router.ts): one adapter per route, built with the
 * credential `RouteKeys` gives; when that changes, the adapter built with the old one is disposed
 * (its warm socket closes) and the next lookup builds one with the new key.
 */
import { describe, expect, it } from "vitest";
import { UpstreamRouter } from "../../../src/upstream/router.ts";
import { parseRoutes, type UpstreamRoute } from "../../../src/upstream/routes.ts";
import type { Upstream } from "../../../src/upstream/upstream.ts";

const routes = parseRoutes(
  JSON.stringify([
    { model: "a*", api: "responses-ws", base_url: "https://default.example/v1", api_key_var: "DEFAULT" },
    { model: "b*", api: "responses-http", base_url: "https://other.example/v1", api_key_var: "OTHER" },
  ]),
  { baseUrl: "https://default.example/v1", apiKey: "deployment-key", api: "responses-http" },
  (name) => (name === "DEFAULT" ? "deployment-key" : "other-key"),
);

function recordingRouter(keys: (route: UpstreamRoute) => string | null) {
  const built: { key: string | null; disposed: boolean }[] = [];
  const router = new UpstreamRouter(
    routes,
    (route): Upstream => {
      const entry = { key: route.apiKey, disposed: false };
      built.push(entry);
      return {
        open: async () => {
          throw new Error("not opened in this test");
        },
        dispose: () => {
          entry.disposed = true;
        },
      };
    },
    keys,
  );
  return { router, built };
}

describe("UpstreamRouter credentials", () => {
  it("builds each route's adapter once with its key, and rebuilds it when the key changes", () => {
    let tenantKey: string | null = null;
    const { router, built } = recordingRouter((route) =>
      tenantKey !== null && route.baseUrl === "https://default.example/v1" ? tenantKey : route.apiKey,
    );
    router.upstreamFor("a1");
    router.upstreamFor("a2");
    router.upstreamFor("b1");
    expect(built).toEqual([
      { key: "deployment-key", disposed: false },
      { key: "other-key", disposed: false },
    ]);
    tenantKey = "tenant-key";
    router.rekey(); // the old adapter goes at once, before any lookup
    expect(built[0]?.disposed).toBe(true);
    expect(built[1]?.disposed).toBe(false);
    router.upstreamFor("a1");
    router.upstreamFor("b1");
    expect(built.slice(2)).toEqual([{ key: "tenant-key", disposed: false }]);
    tenantKey = null;
    router.upstreamFor("a1"); // a lookup alone also replaces it
    expect(built[2]?.disposed).toBe(true);
    expect(built.at(-1)).toEqual({ key: "deployment-key", disposed: false });
  });
});
