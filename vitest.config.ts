/**
 * Test configuration: three projects.
 * - `unit`: pure logic (parsers, translation, pairing, truncation, id codecs) in plain Node,
 *   under test/unit/ at the path of the source file it tests (test/unit/upstream/sse.test.ts
 *   tests src/upstream/sse.ts). Anything that needs the Workers runtime goes to `workers`.
 * - `workers`: runs inside workerd through the Workers vitest integration
 *   (@cloudflare/vitest-plugin), against the real Worker, real Durable Objects with SQLite
 *   storage, and the reference simulator as upstream (a real HTTP server started in
 *   globalSetup, reached from workerd over loopback).
 * - `node`: plain Node tests: the simulator speaking to the real `openai` SDK, and end-to-end
 *   runs of real clients (`ResponsesWS`, Codex CLI) against `wrangler dev`.
 * Source: https://developers.cloudflare.com/workers/testing/vitest-integration/
 */
import { availableParallelism } from "node:os";
import { cloudflareTest } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";
import { ECHO_APIS, ECHO_KEY_BINDINGS, ECHO_KEYS, type EchoShape } from "./test/support/echo-keys.ts";

const ECHO_SHAPES = Object.keys(ECHO_KEYS) as EchoShape[];

export default defineConfig({
  test: {
    // Vitest's default (cores - 1) runs one file at a time on 2 cores, yet most files spend their
    // time waiting on sockets, timers and wrangler starts: four at a time at least (measured on 2
    // shared cores: docs/testing.md "How long it takes").
    maxWorkers: Math.max(4, availableParallelism()),
    // Vitest 4 reports an unhandled `EnvironmentTeardownError` ("[vitest-worker]: Closing rpc while
    // \"resolve\" was pending", or "onUserConsoleLog") when a pool worker closes after its last file
    // while the Worker's own scheduled work (a Durable Object alarm: a usage flush, a lease sync, a
    // webhook retry) still calls into the runner — after every test passed
    // (https://github.com/vitest-dev/vitest/issues/11153, open). That one error, and no other, is
    // not counted; it is still printed. What a test file itself leaves in flight is settled first
    // (test/support/settle-between-files.ts; docs/testing.md).
    onUnhandledError: (error) => {
      const teardownRace =
        error.name === "EnvironmentTeardownError" &&
        String(error.message).startsWith("[vitest-worker]: Closing rpc while");
      if (teardownRace) console.warn(`(not counted, vitest-dev/vitest#11153) ${error.message}`);
      return !teardownRace;
    },
    // One timing line per turn (src/pipeline/turn-timing.ts) would drown the test output.
    onConsoleLog: (log: string) => !log.includes('"type":"deltagate.turn"'),
    projects: [
      {
        plugins: [
          cloudflareTest(({ inject }) => {
            const upstream = `${inject<string>("simulatorUrl")}/v1`;
            const otherProvider = `${inject<string>("otherProviderUrl")}/v1`;
            const echo = inject<string>("echoUpstreamUrl");
            // The hostile upstream (test/support/echo-upstream.ts), one route per API and key
            // shape, no retries: `echo-http-groq` is Responses HTTP with the Groq-shaped key.
            const echoRoutes = ECHO_SHAPES.flatMap((shape) => [
              ...Object.entries(ECHO_APIS).map(([prefix, api]) => ({
                model: `echo-${prefix}-${shape}`,
                api,
                base_url: `${echo}/v1`,
                api_key_var: ECHO_KEY_BINDINGS[shape],
                max_retries: 0,
              })),
              // A WebSocket upgrade refused with 400 and the key in the body.
              {
                model: `echo-wsdeny-${shape}`,
                api: "responses-ws",
                base_url: `${echo}/status/400/v1`,
                api_key_var: ECHO_KEY_BINDINGS[shape],
                max_retries: 0,
              },
            ]);
            // Test routing table: model prefixes pick the adapter under test; all reach the simulator.
            const routes = [
              ...echoRoutes,
              // Multi-MB items (test/workers/hostile/large-items.test.ts): a simulator without
              // prefill cost and a window large enough that a 5 MB tool output fits.
              {
                model: "sim-large-ws*",
                api: "responses-ws",
                base_url: `${inject<string>("largeSimulatorUrl")}/v1`,
                context_window: 100_000_000,
                idle_ms: 300, // the warm socket closes soon, so the test can evict the session
              },
              {
                model: "sim-large*",
                api: "responses-http",
                base_url: `${inject<string>("largeSimulatorUrl")}/v1`,
                context_window: 100_000_000,
              },
              // Anthropic Messages (src/upstream/anthropic/) to the Anthropic simulator, which serves
              // `claude-*` ids: breakpoints on (64-token minimum, as the simulator), or off; a model
              // it does not serve (404).
              {
                model: "sim-claude-nocache*",
                api: "anthropic-messages",
                base_url: `${inject<string>("anthropicSimulatorUrl")}/v1`,
                api_key_var: "UPSTREAM_API_KEY",
                upstream_model: "claude-sim-1",
                cache_breakpoints: false,
              },
              {
                model: "sim-claude-unknown*",
                api: "anthropic-messages",
                base_url: `${inject<string>("anthropicSimulatorUrl")}/v1`,
                api_key_var: "UPSTREAM_API_KEY",
                upstream_model: "gpt-not-claude",
              },
              // Hosted tools (`web_search`) left out rather than refused (docs/anthropic.md).
              {
                model: "sim-claude-omit*",
                api: "anthropic-messages",
                base_url: `${inject<string>("anthropicSimulatorUrl")}/v1`,
                api_key_var: "UPSTREAM_API_KEY",
                upstream_model: "claude-sim-1",
                hosted_tools: "omit",
              },
              {
                model: "sim-claude*",
                api: "anthropic-messages",
                base_url: `${inject<string>("anthropicSimulatorUrl")}/v1`,
                api_key_var: "UPSTREAM_API_KEY",
                upstream_model: "claude-sim-1",
                cache_min_tokens: 64,
                max_retries: 1,
              },
              // Gemini (src/upstream/gemini/) to the Gemini simulator, which serves `gemini-*` ids: a
              // Gemini 3 model (thinking levels, call ids, signatures required), a Gemini 2.5 one
              // (thinking budgets, no call ids), and a model it does not serve (404).
              {
                model: "sim-gemini-unknown*",
                api: "gemini",
                base_url: `${inject<string>("geminiSimulatorUrl")}/v1beta`,
                api_key_var: "UPSTREAM_API_KEY",
                upstream_model: "gpt-not-gemini",
              },
              {
                model: "sim-gemini-25*",
                api: "gemini",
                base_url: `${inject<string>("geminiSimulatorUrl")}/v1beta`,
                api_key_var: "UPSTREAM_API_KEY",
                upstream_model: "gemini-2.5-flash-sim",
              },
              // Hosted tools (`web_search`) left out rather than refused (docs/gemini.md).
              {
                model: "sim-gemini-omit*",
                api: "gemini",
                base_url: `${inject<string>("geminiSimulatorUrl")}/v1beta`,
                api_key_var: "UPSTREAM_API_KEY",
                upstream_model: "gemini-3-flash-sim",
                hosted_tools: "omit",
              },
              {
                model: "sim-gemini*",
                api: "gemini",
                base_url: `${inject<string>("geminiSimulatorUrl")}/v1beta`,
                api_key_var: "UPSTREAM_API_KEY",
                upstream_model: "gemini-3-flash-sim",
                max_retries: 1,
              },
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
              // Compaction (src/compaction/): routes that pass compaction and token counting through
              // to the simulator (which serves /responses/compact and /responses/input_tokens), over
              // HTTP and WebSocket mode; the other simulator routes let Deltagate compact.
              {
                model: "sim-cmp-upws*",
                api: "responses-ws",
                base_url: upstream,
                compaction: "upstream",
                input_tokens: "upstream",
              },
              {
                model: "sim-cmp-up*",
                api: "responses-http",
                base_url: upstream,
                compaction: "upstream",
                input_tokens: "upstream",
              },
              // Encrypted reasoning across a fallback (src/upstream/encrypted-reasoning.ts): a
              // WebSocket route, then the HTTP route of the same provider (same base URL)…
              { model: "sim-fb-same*", api: "responses-ws", base_url: upstream, max_retries: 0 },
              { model: "sim-fb-same*", api: "responses-http", base_url: upstream },
              // …or of another provider (a second simulator, with its own reasoning ledger).
              { model: "sim-fb-other*", api: "responses-ws", base_url: upstream, max_retries: 0 },
              { model: "sim-fb-other*", api: "responses-http", base_url: otherProvider },
              { model: "*", api: "responses-http", base_url: upstream, api_key_var: "UPSTREAM_API_KEY" },
            ];
            return {
              // workerd's --verbose logs every internal exception with a stack, including ones the
              // Worker handles (a refused connection, a body cut by its peer): noise in a green run.
              // Uncaught errors of the Worker's own code still reach the console.
              verbose: false,
              wrangler: { configPath: "./wrangler.toml" },
              miniflare: {
                bindings: {
                  UPSTREAMS: JSON.stringify(routes),
                  UPSTREAM_BASE_URL: upstream,
                  UPSTREAM_API_KEY: "sim-test-key",
                  DELTAGATE_API_KEYS: "dg-test-a:tenant-a,dg-test-b:tenant-b",
                  // The three secrets keep their deprecated names on purpose (src/config/schema.ts
                  // DEPRECATED_SETTINGS): every workers test runs the back-compatible path;
                  // test/workers/root-secret.test.ts runs DELTAGATE_SECRET.
                  // Client secrets (src/auth/): a test signing key and the development minting route.
                  CLIENT_SECRET_SIGNING_KEY: "test-client-secret-signing-key-0123456789",
                  DEMO_CLIENT_SECRET_TENANT: "tenant-a",
                  // The control plane (src/tenancy/): minted keys' signatures, the admin API.
                  CONTROL_SECRET: "test-control-secret-0123456789",
                  ADMIN_API_KEY: "dg-test-admin",
                  MODELS: "deltagate-sim",
                  // Prices (src/context/turn-cost.ts): `sim-claude` at Claude Sonnet's list prices
                  // (test/workers/tenancy/usage-cost.test.ts); every other model has none.
                  PRICES: JSON.stringify({
                    "sim-claude": { input: 3, cached_input: 0.3, cache_write: 3.75, output: 15 },
                  }),
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
                  ...Object.fromEntries(
                    ECHO_SHAPES.map((shape) => [ECHO_KEY_BINDINGS[shape], ECHO_KEYS[shape]]),
                  ),
                  // Keepalives after 1 s of silence (production default 15 s), so a test upstream
                  // that stays silent for a few seconds (`delay_ms`) shows them.
                  KEEPALIVE_MS: "1000",
                  // Deltagate's own compaction items (src/compaction/): a test key.
                  COMPACTION_KEY: "dg-test-compaction-key",
                  // Webhooks (docs/webhooks.md): the test receiver is the one loopback target
                  // allowed; retries 50 ms apart at first (production: 5 s), so a test sees several.
                  WEBHOOK_ALLOW_PRIVATE_TARGETS: inject<string>("webhookReceiverUrl"),
                  WEBHOOK_RETRY_BASE_MS: "50",
                },
              },
            };
          }),
        ],
        test: {
          name: "workers",
          include: ["test/workers/**/*.test.ts"],
          // One workerd (Miniflare) for every file instead of a new one per file: starting workerd
          // and importing the Worker's modules (the tokenizer's tables above all) per file cost
          // more than the tests themselves. Files share Durable Object storage, which the tests
          // allow for: each uses its own session names.
          isolate: false,
          globalSetup: ["./test/support/global-setup.ts"],
          // No file leaves a call to Vitest in flight at its end (vitest-dev/vitest#11153).
          setupFiles: ["./test/support/settle-between-files.ts"],
          testTimeout: 30_000,
          // The setup file's `beforeAll` loads the tokenizer's tables, CPU-bound for seconds: beside
          // a busy core it outlasted Vitest's default 10 s (docs/testing.md "How long it takes").
          hookTimeout: 60_000,
        },
      },
      {
        test: {
          name: "unit",
          include: ["test/unit/**/*.test.ts"],
          environment: "node",
          // Pure logic with no module mocks and every spy restored: one module graph per pool
          // worker for all its files (10 s instead of 23 s for the project; docs/testing.md).
          isolate: false,
          // The property tests (an SSE stream cut at every byte offset, 1 MiB pathological token
          // counts) are CPU-bound for seconds while workerd files run beside them on 2 cores.
          testTimeout: 30_000,
        },
      },
      {
        test: {
          name: "node",
          include: ["test/node/**/*.test.ts"],
          environment: "node",
          // As `unit`: no module mocks, no environment changed in place, every stack and server a
          // file starts stopped in its own hooks — so files share one module graph per worker.
          isolate: false,
          // The one `npm start` stack the end-to-end files with default settings share, started on
          // first use (test/support/shared-stack-setup.ts; docs/testing.md "Shared stacks").
          globalSetup: ["./test/support/shared-stack-setup.ts"],
          testTimeout: 120_000,
          hookTimeout: 120_000,
        },
      },
    ],
  },
});
