/**
 * Test configuration: two projects.
 * - `workers`: runs inside workerd through the Workers vitest integration
 *   (@cloudflare/vitest-plugin), against the real Worker, real Durable Objects with SQLite
 *   storage, and the reference simulator as upstream (a real HTTP server started in
 *   globalSetup, reached from workerd over loopback).
 * - `node`: plain Node tests: the simulator speaking to the real `openai` SDK, and end-to-end
 *   runs of real clients (`ResponsesWS`, Codex CLI) against `wrangler dev`.
 * Source: https://developers.cloudflare.com/workers/testing/vitest-integration/
 */
import { cloudflareTest } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    projects: [
      {
        plugins: [
          cloudflareTest(({ inject }) => {
            const upstream = `${inject<string>("simulatorUrl")}/v1`;
            // Test routing table: model prefixes pick the adapter under test; all reach the simulator.
            const routes = [
              {
                model: "sim-chat*",
                api: "chat-completions",
                base_url: upstream,
                api_key_var: "UPSTREAM_API_KEY",
              },
              { model: "sim-ws*", api: "responses-ws", base_url: upstream, api_key_var: "UPSTREAM_API_KEY" },
              { model: "*", api: "responses-http", base_url: upstream, api_key_var: "UPSTREAM_API_KEY" },
            ];
            return {
              wrangler: { configPath: "./wrangler.toml" },
              miniflare: {
                bindings: {
                  UPSTREAMS: JSON.stringify(routes),
                  UPSTREAM_BASE_URL: upstream,
                  UPSTREAM_API_KEY: "sim-test-key",
                  DELTAGATE_API_KEYS: "dg-test-a:tenant-a,dg-test-b:tenant-b",
                  MODELS: "deltagate-sim",
                },
              },
            };
          }),
        ],
        test: {
          name: "workers",
          include: ["test/workers/**/*.test.ts"],
          globalSetup: ["./test/support/global-setup.ts"],
          testTimeout: 30_000,
        },
      },
      {
        test: {
          name: "node",
          include: ["test/node/**/*.test.ts"],
          environment: "node",
          testTimeout: 120_000,
          hookTimeout: 120_000,
        },
      },
    ],
  },
});
