/**
 * Test configuration: two projects.
 * - `workers`: runs inside workerd through the Workers vitest integration
 *   (@cloudflare/vitest-plugin), against the real Worker, real Durable Objects with SQLite
 *   storage, and the reference simulator as upstream (a real HTTP server started in
 *   globalSetup, reached from workerd over loopback).
 * - `unit`: pure logic under test/unit/ in plain Node.
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
              // Responses HTTP upstream that stores responses: chained turns go delta-only.
              { model: "sim-stored*", api: "responses-http", base_url: upstream, upstream_store: true },
              // Chat Completions with a 300-token window, for `truncation` through that adapter.
              { model: "sim-chat-small*", api: "chat-completions", base_url: upstream, context_window: 300 },
              {
                model: "sim-chat*",
                api: "chat-completions",
                base_url: upstream,
                api_key_var: "UPSTREAM_API_KEY",
              },
              // A short idle time so a test can watch the warm upstream socket close (idle_ms).
              {
                model: "sim-ws-idle*",
                api: "responses-ws",
                base_url: upstream,
                api_key_var: "UPSTREAM_API_KEY",
                idle_ms: 400,
              },
              { model: "sim-ws*", api: "responses-ws", base_url: upstream, api_key_var: "UPSTREAM_API_KEY" },
              // A tiny context window, so `truncation` is reachable (src/context).
              { model: "sim-small*", api: "responses-http", base_url: upstream, context_window: 300 },
              // Fallback chains (src/upstream/fallback.ts): a dead first route, then the simulator…
              {
                model: "sim-fallback*",
                api: "responses-http",
                base_url: "http://127.0.0.1:9/v1",
                max_retries: 1,
              },
              { model: "sim-fallback*", api: "responses-http", base_url: upstream, max_retries: 1 },
              // …and two simulator routes, so every attempt of a failing turn shows in the recorder.
              { model: "sim-retry*", api: "responses-http", base_url: upstream, max_retries: 2 },
              { model: "sim-retry*", api: "responses-http", base_url: upstream, max_retries: 1 },
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
                  // Short retry backoff keeps failing-upstream tests quick (production default 250 ms).
                  UPSTREAM_RETRY_BASE_MS: "5",
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
        // Pure logic under test/unit/ (mirroring src/ paths): fast, in plain Node.
        test: { name: "unit", include: ["test/unit/**/*.test.ts"], environment: "node" },
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
