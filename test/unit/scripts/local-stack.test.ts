/**
 * How scripts/local-stack.ts runs `wrangler dev` (for `npm start`, the benchmark and the
 * end-to-end tests): tuned like production — wrangler's local observability (a trace store written
 * on every Durable Object event) is off unless the caller turns it on — and never told to read
 * the caller's variables into the Worker; and the free port a stack is given lies outside the range
 * the OS hands out by itself, so no other process's own port can take it before wrangler binds it.
 */
import { createServer } from "node:net";
import { describe, expect, it } from "vitest";
import { freePort, wranglerEnv } from "../../../scripts/local-stack.ts";

describe("wranglerEnv", () => {
  it("turns wrangler's local observability off", () => {
    expect(wranglerEnv({ PATH: "/bin" }, false).X_LOCAL_OBSERVABILITY).toBe("false");
  });

  it("keeps the caller's own X_LOCAL_OBSERVABILITY", () => {
    expect(wranglerEnv({ X_LOCAL_OBSERVABILITY: "true" }, false).X_LOCAL_OBSERVABILITY).toBe("true");
  });

  it("keeps the caller's environment but never lets it reach the Worker", () => {
    const env = wranglerEnv({ PATH: "/bin", CLOUDFLARE_INCLUDE_PROCESS_ENV: "true" }, false);
    expect(env.PATH).toBe("/bin");
    expect(env.CLOUDFLARE_INCLUDE_PROCESS_ENV).toBe("false");
    expect(env.CLOUDFLARE_LOAD_DEV_VARS_FROM_DOT_ENV).toBe("true");
    expect(env.FORCE_COLOR).toBeUndefined();
    expect(wranglerEnv({}, true).FORCE_COLOR).toBe("1");
  });
});

describe("freePort", () => {
  it("gives a port below the OS's own range (32768 and up on Linux) that can be listened on", async () => {
    const ports = await Promise.all(Array.from({ length: 20 }, () => freePort()));
    for (const port of ports) {
      expect(port).toBeGreaterThanOrEqual(20_000);
      expect(port).toBeLessThan(32_768);
    }
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(ports[0], "127.0.0.1", () => resolve());
    });
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
});
