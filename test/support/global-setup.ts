/**
 * Vitest globalSetup for the `workers` project: starts the reference simulator (a real
 * OpenAI-compatible HTTP + WebSocket server) on a free loopback port and provides its base URL
 * (`simulatorUrl`, no trailing slash, without `/v1`) to the pool config and to tests via `inject`.
 * A second instance (`otherProviderUrl`) stands for another provider: it has its own state, so it
 * refuses encrypted reasoning the first one issued, as a different provider would.
 */
import type { TestProject } from "vitest/node";
import { startSimulator } from "../../simulator/server.ts";

declare module "vitest" {
  export interface ProvidedContext {
    simulatorUrl: string;
    otherProviderUrl: string;
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
  project.provide("simulatorUrl", sim.url);
  project.provide("otherProviderUrl", other.url);
  return async () => {
    await Promise.all([sim.close(), other.close()]);
  };
}
