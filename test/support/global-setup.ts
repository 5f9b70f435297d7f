/**
 * Vitest globalSetup for the `workers` project: starts the reference simulator (a real
 * OpenAI-compatible HTTP + WebSocket server) on a free loopback port and provides its base URL
 * (`simulatorUrl`, no trailing slash, without `/v1`) to the pool config and to tests via `inject`.
 */
import type { TestProject } from "vitest/node";
import { startSimulator } from "../../simulator/server.ts";

declare module "vitest" {
  export interface ProvidedContext {
    simulatorUrl: string;
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
  project.provide("simulatorUrl", sim.url);
  return async () => {
    await sim.close();
  };
}
