/**
 * The web agent page (src/worker/demo-page.ts): served from the Worker's static assets where the
 * demo is on (`DEMO_CLIENT_SECRET_TENANT`, set in this test environment as `npm start` sets it),
 * and absent where it is off, as in production by default: every path of it is then a JSON 404
 * that names the setting, although its files are among the Worker's assets. (The page at work in
 * a browser: test/node/e2e-browser-agent.test.ts.)
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { fetchWithEnv } from "../support/client-secrets.ts";
import { workerFetch } from "../support/ws-client.ts";

const PATHS = ["/demo", "/demo/", "/demo/index.html", "/demo/agent.js"];

describe("demo page", () => {
  it("is served from the static assets where the demo is on", async () => {
    const page = await workerFetch("/demo/");
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toContain("text/html");
    expect(await page.text()).toContain('<script type="module" src="agent.js">');
    const script = await workerFetch("/demo/connection.js");
    expect(script.status).toBe(200);
    expect(script.headers.get("content-type")).toContain("javascript");
  });

  it("answers 404 for the page and its files where the demo is off, though the assets are bound", async () => {
    expect(env.ASSETS).toBeDefined();
    for (const path of PATHS) {
      const res = await fetchWithEnv({ DEMO_CLIENT_SECRET_TENANT: "" }, path);
      expect(res.status, path).toBe(404);
      const body = (await res.json()) as { error: { code: string; message: string } };
      expect(body.error.code).toBe("not_found");
      expect(body.error.message).toContain("DEMO_CLIENT_SECRET_TENANT");
    }
  });
});
