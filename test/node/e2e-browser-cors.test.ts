/**
 * A page on another origin calls Deltagate's HTTP API from a real browser (headless Chromium,
 * test/support/browser.ts) with a client secret, as a web app whose backend minted it would
 * (issue #16 item 5): the preflight that a bearer `Authorization` and a JSON body cause, a
 * streamed response read as SSE over `fetch`, the `Server-Timing` header (exposed), a retrieve,
 * a refused secret whose error the page can read, and a WebSocket from that origin with the
 * secret in the query. The page's origin is a tiny static server on another port; Deltagate runs
 * under `wrangler dev` behind the recording proxy, which shows the preflight on the wire; the app's
 * origin is in `CORS_ALLOWED_ORIGINS` (the local stack allows only its own origins by default).
 */
import { createServer, type Server } from "node:http";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort, LOCAL_DEV_KEY } from "../../scripts/local-stack.ts";
import { launchChromium } from "../support/browser.ts";
import { useProxiedStack } from "../support/e2e-stack.ts";

/** The app's origin: configured in `CORS_ALLOWED_ORIGINS`, as the local stack allows only its own. */
const sitePort = await freePort();
const siteUrl = `http://localhost:${sitePort}/`;
const e2e = useProxiedStack({ CORS_ALLOWED_ORIGINS: new URL(siteUrl).origin });
let browser: Browser | undefined;
let site: Server | undefined;

beforeAll(async () => {
  browser = await launchChromium();
  site = createServer((_req, res) => {
    res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
    res.end("<!doctype html><title>another origin</title><p>An app on another origin.</p>");
  });
  await new Promise<void>((resolve) => site!.listen(sitePort, "127.0.0.1", resolve));
});
afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => site?.close(resolve));
});

/** The app's backend: mints a client secret with the tenant key (never sent to the page). */
async function mintSecret(): Promise<string> {
  const res = await fetch(`${e2e.stack.baseUrl}/client_secrets`, {
    method: "POST",
    headers: { authorization: `Bearer ${LOCAL_DEV_KEY}`, "content-type": "application/json" },
    body: JSON.stringify({ expires_after: { anchor: "created_at", seconds: 120 } }),
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { value: string }).value;
}

describe("the HTTP API from a page on another origin", () => {
  it("streams a response over fetch with a client secret: preflight, SSE, Server-Timing, retrieve, errors", async () => {
    const secret = await mintSecret();
    const page = await browser!.newPage();
    await page.goto(siteUrl);
    const result = await page.evaluate(
      async ({ base, secret }) => {
        const headers = { authorization: `Bearer ${secret}`, "content-type": "application/json" };
        const res = await fetch(`${base}/v1/responses`, {
          method: "POST",
          headers: { ...headers, "x-deltagate-timing": "1" },
          body: JSON.stringify({ model: "deltagate-sim", input: "Hello [sim:tokens=300]", stream: true }),
        });
        const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
        let text = "";
        let reads = 0;
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          text += value;
          reads++;
        }
        const events = text
          .split("\n\n")
          .map((block) => block.split("\n").find((line) => line.startsWith("data: ")))
          .filter((line): line is string => line !== undefined)
          .map(
            (line) =>
              JSON.parse(line.slice(6)) as {
                type: string;
                sequence_number?: number;
                response?: { id: string };
              },
          );
        const id = events[0]?.response?.id ?? "";
        const retrieved = (await (
          await fetch(`${base}/v1/responses/${id}`, { headers: { authorization: `Bearer ${secret}` } })
        ).json()) as { id: string; status: string };
        const forged = await fetch(`${base}/v1/responses/${id}`, {
          headers: { authorization: `Bearer ${secret.slice(0, -4)}AAAA` },
        });
        return {
          origin: (globalThis as unknown as { location: { origin: string } }).location.origin,
          status: res.status,
          contentType: res.headers.get("content-type"),
          serverTiming: res.headers.get("server-timing"),
          reads,
          events: events.map((e) => ({ type: e.type, seq: e.sequence_number ?? null })),
          retrieved: { id: retrieved.id, status: retrieved.status },
          forged: { status: forged.status, body: (await forged.json()) as { error: { code: string } } },
        };
      },
      { base: e2e.proxy.url, secret },
    );
    expect(result.origin).not.toBe(e2e.proxy.url);
    expect(result.status).toBe(200);
    expect(result.contentType).toContain("text/event-stream");
    // Per-stage timing readable cross-origin (Access-Control-Expose-Headers).
    expect(result.serverTiming).toMatch(/edge;dur=/);
    // Streamed: read in several pieces, contiguous, ending with the terminal event and the timing.
    expect(result.reads).toBeGreaterThan(1);
    const numbered = result.events.filter((e) => e.seq !== null);
    expect(numbered.map((e) => e.seq)).toEqual(numbered.map((_, i) => i));
    expect(result.events[0]?.type).toBe("response.created");
    expect(result.events.slice(-2).map((e) => e.type)).toEqual(["response.completed", "deltagate.timing"]);
    expect(result.retrieved.status).toBe("completed");
    expect(result.forged.status).toBe(401);
    expect(result.forged.body.error.code).toMatch(/^client_secret_(invalid|malformed)$/);
    // The browser asked first: a preflight (no credentials, answered without authentication).
    const calls = e2e.proxy.http.map((r) => `${r.method} ${r.path.split("?")[0]} ${r.status}`);
    const preflight = calls.indexOf("OPTIONS /v1/responses 204");
    expect(preflight).toBeGreaterThanOrEqual(0);
    expect(calls.indexOf("POST /v1/responses 200")).toBeGreaterThan(preflight);
    await page.close();
  });

  it("opens a WebSocket from another origin with the secret in the query", async () => {
    const secret = await mintSecret();
    const page = await browser!.newPage();
    await page.goto(siteUrl);
    const result = await page.evaluate(
      ({ wsBase, secret }) =>
        new Promise<{ protocol: string; types: string[] }>((resolve, reject) => {
          const ws = new WebSocket(`${wsBase}/v1/responses?client_secret=${encodeURIComponent(secret)}`);
          const types: string[] = [];
          ws.addEventListener("open", () =>
            ws.send(JSON.stringify({ type: "response.create", model: "deltagate-sim", input: "Hi" })),
          );
          ws.addEventListener("message", (message) => {
            const event = JSON.parse(String(message.data)) as { type: string };
            types.push(event.type);
            if (event.type === "response.completed") {
              ws.close();
              resolve({ protocol: ws.protocol ?? "", types });
            }
          });
          ws.addEventListener("close", (close) =>
            reject(new Error(`closed ${close.code} after ${types.join(",")}`)),
          );
        }),
      { wsBase: e2e.proxy.url.replace("http:", "ws:"), secret },
    );
    expect(result.protocol).toBe("");
    expect(result.types[0]).toBe("response.created");
    expect(result.types.at(-1)).toBe("response.completed");
    await page.close();
  });
});
