/**
 * Vitest globalSetup for the `workers` project: starts the real servers the tests reach from
 * workerd over loopback, and provides their base URLs (no trailing slash, without `/v1`) to the
 * pool config and to tests via `inject`:
 * - `simulatorUrl`: the reference simulator (OpenAI-compatible HTTP + WebSocket server);
 * - `largeSimulatorUrl`: a second simulator without prefill cost, for multi-MB contexts (the
 *   default 0.05 ms per token would make a 5 MB tool output take a minute before its first event);
 * - `echoUpstreamUrl`: the hostile upstream that echoes its key in every error (echo-upstream.ts);
 * - `otherProviderUrl`: a second simulator standing for another provider: it has its own state, so
 *   it refuses encrypted reasoning the first one issued, as a different provider would;
 * - `anthropicSimulatorUrl`: a simulator for the Anthropic routes (`/v1/messages`), with a 64-token
 *   minimum cacheable prompt, so the short conversations of tests are cached;
 * - `geminiSimulatorUrl`: a simulator for the Gemini routes (`/v1beta/models/…`), with a 64-token
 *   implicit-cache minimum, likewise;
 * - `webhookReceiverUrl`: a webhook receiver that records deliveries (webhook-receiver.ts); the
 *   only loopback origin the workers project allows webhooks to (`WEBHOOK_ALLOW_PRIVATE_TARGETS`).
 */
import type { TestProject } from "vitest/node";
import { startSimulator } from "../../simulator/server.ts";
import { startEchoUpstream } from "./echo-upstream.ts";
import { startWebhookReceiver } from "./webhook-receiver.ts";

declare module "vitest" {
  export interface ProvidedContext {
    simulatorUrl: string;
    otherProviderUrl: string;
    largeSimulatorUrl: string;
    echoUpstreamUrl: string;
    anthropicSimulatorUrl: string;
    geminiSimulatorUrl: string;
    webhookReceiverUrl: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  // The safety tests' marker (test/support/safety.ts) is flagged by /v1/moderations too.
  const sim = await startSimulator({
    port: 0,
    host: "127.0.0.1",
    quiet: true,
    moderationFlagWords: ["zebra-flag-marker"],
  });
  const other = await startSimulator({ port: 0, host: "127.0.0.1", quiet: true });
  const large = await startSimulator({ port: 0, host: "127.0.0.1", quiet: true, prefillMsPerToken: 0 });
  const anthropic = await startSimulator({
    port: 0,
    host: "127.0.0.1",
    quiet: true,
    anthropicCacheMinTokens: 64,
  });
  const gemini = await startSimulator({ port: 0, host: "127.0.0.1", quiet: true, geminiCacheMinTokens: 64 });
  const echo = await startEchoUpstream();
  const receiver = await startWebhookReceiver();
  project.provide("simulatorUrl", sim.url);
  project.provide("otherProviderUrl", other.url);
  project.provide("largeSimulatorUrl", large.url);
  project.provide("echoUpstreamUrl", echo.url);
  project.provide("anthropicSimulatorUrl", anthropic.url);
  project.provide("geminiSimulatorUrl", gemini.url);
  project.provide("webhookReceiverUrl", receiver.url);
  return async () => {
    await Promise.all([
      sim.close(),
      other.close(),
      large.close(),
      anthropic.close(),
      gemini.close(),
      echo.close(),
      receiver.close(),
    ]);
  };
}
