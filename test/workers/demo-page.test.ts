/**
 * The web agent page (src/worker/demo-page.ts) is absent where the demo is off, as in this test
 * environment and in production by default: every path of it is a JSON 404 that names the setting,
 * although its files are among the Worker's static assets. (Served with the demo on:
 * test/node/e2e-browser-agent.test.ts.)
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { workerFetch } from "../support/ws-client.ts";

describe("demo page where the demo is off", () => {
  it("answers 404 for the page and its files, though the assets are bound", async () => {
    expect(env.ASSETS).toBeDefined();
    for (const path of ["/demo", "/demo/", "/demo/index.html", "/demo/agent.js"]) {
      const res = await workerFetch(path);
      expect(res.status, path).toBe(404);
      const body = (await res.json()) as { error: { code: string; message: string } };
      expect(body.error.code).toBe("not_found");
      expect(body.error.message).toContain("DEMO_CLIENT_SECRET_TENANT");
    }
  });
});
