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
              // Safety policies per route (src/safety/; UPSTREAMS[].safety), all classifying at the
              // simulator's /v1/moderations (SAFETY_MODERATION_URL defaults to the upstream).
              // Input by moderation, output by the local rules (one remote call per turn at most).
              {
                model: "sim-safe-mod*",
                api: "responses-http",
                base_url: upstream,
                safety: { classifier: "moderation", output_classifier: "rules", timeout_ms: 3_000 },
              },
              // Output windows by moderation; tool outputs trusted (so a test can feed the model text
              // that only its output repeats).
              {
                model: "sim-safe-out*",
                api: "responses-http",
                base_url: upstream,
                safety: {
                  classifier: "moderation",
                  items: { function_call_output: "trust" },
                  window_chars: 40,
                },
              },
              {
                model: "sim-safe-rules*",
                api: "responses-http",
                base_url: upstream,
                safety: { items: { function_call_output: "trust" } },
              },
              {
                model: "sim-safe-block*",
                api: "responses-http",
                base_url: upstream,
                safety: { mode: "blocking", classifier: "moderation", output_classifier: "none" },
              },
              {
                model: "sim-safe-fail*",
                api: "responses-http",
                base_url: upstream,
                safety: { classifier: "moderation", timeout_ms: 300 },
              },
              {
                model: "sim-safe-open*",
                api: "responses-http",
                base_url: upstream,
                safety: { classifier: "moderation", failure: "open", timeout_ms: 300 },
              },
              {
                model: "sim-safe-report*",
                api: "responses-http",
                base_url: upstream,
                safety: { report_events: true },
              },
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
                  // Safety: tenant-b runs with safety off; the rules also flag the test marker
                  // (test/support/safety.ts), as the simulator's /v1/moderations does.
                  SAFETY_TENANTS: JSON.stringify({ "tenant-b": { mode: "off" } }),
                  SAFETY_LOG: "off", // quiet test output; report.ts's log lines have a unit test
                  SAFETY_RULES: JSON.stringify({
                    patterns: [
                      { pattern: "zebra-flag-marker", flags: "i", category: "test/marker", hold: 20 },
                    ],
                  }),
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
