/**
 * `npm start` is closed by default (issue #23 item 6): its root secret (from which the
 * client-secret signing key is derived) and admin key are random, in a file beside its state (scripts/local-secrets.ts), so a secret signed
 * with the key `npm start` used to publish is refused; only its own origins may call it, so a page
 * on another origin — a real one, in headless Chromium — can neither mint a client secret from the
 * demo route (not even with the `text/plain` POST that needs no preflight) nor use the published
 * development key; the demo page on the stack's own origin still mints.
 */
import { statSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { LOCAL_SECRETS_FILE, localSecrets } from "../../scripts/local-secrets.ts";
import { freePort, LOCAL_DEV_KEY } from "../../scripts/local-stack.ts";
import { mintClientSecret } from "../../src/auth/client-secret.ts";
import { launchChromium } from "../support/browser.ts";
import { type NpmStart, startNpmStart } from "../support/npm-start.ts";

/** The client-secret signing key `npm start` set before issue #23, published in its source. */
const OLD_PUBLISHED_SIGNING_KEY = "deltagate-local-dev-client-secret-signing-key";
/** Another origin: a page an attacker serves (a port of its own on this machine). */
const sitePort = await freePort();
const siteOrigin = `http://localhost:${sitePort}`;

let stack: NpmStart | undefined;
let browser: Browser | undefined;
let site: Server | undefined;

beforeAll(async () => {
  stack = await startNpmStart({});
  browser = await launchChromium();
  site = createServer((_req, res) => {
    res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
    res.end("<!doctype html><title>another origin</title><p>Some page on the web.</p>");
  });
  await new Promise<void>((resolve) => site!.listen(sitePort, "127.0.0.1", resolve));
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => site?.close(resolve));
  await stack?.stop();
});

function started(): NpmStart {
  if (!stack) throw new Error("npm start did not start");
  return stack;
}

/** The status and error code of `init` sent to `path` of the stack. */
async function send(
  path: string,
  init: RequestInit,
): Promise<{ status: number; code: unknown; body: string }> {
  const res = await fetch(`${started().origin}${path}`, init);
  const body = await res.text();
  let code: unknown = null;
  try {
    code = (JSON.parse(body) as { error?: { code?: unknown } }).error?.code ?? null;
  } catch {
    // not JSON
  }
  return { status: res.status, code, body };
}

describe("npm start's secrets", () => {
  it("are random and kept in a private file beside its state, not the published constants", () => {
    const path = join(started().stateDir, LOCAL_SECRETS_FILE);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    const secrets = localSecrets(started().stateDir);
    expect(Object.keys(secrets).sort()).toEqual(["ADMIN_API_KEY", "DELTAGATE_SECRET"]);
    expect(secrets.DELTAGATE_SECRET).not.toBe(OLD_PUBLISHED_SIGNING_KEY);
    for (const value of Object.values(secrets)) expect(value).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(started().output()).not.toContain(secrets.DELTAGATE_SECRET);
  });

  it("refuses a client secret signed with the old published key, for its tenant or another", async () => {
    for (const tenant of ["local", "tenant-b"]) {
      const forged = await mintClientSecret(OLD_PUBLISHED_SIGNING_KEY, {
        tenant,
        id: "forged",
        sessionId: `forged-${tenant}`,
        expiresAt: Math.floor(Date.now() / 1000) + 600,
        models: null,
        maxTurns: null,
        maxRequestBytes: null,
      });
      const turn = await send("/v1/responses", {
        method: "POST",
        headers: { authorization: `Bearer ${forged}`, "content-type": "application/json" },
        body: JSON.stringify({ model: "deltagate-sim", input: "hello" }),
      });
      expect(turn.status, turn.body).toBe(401);
      expect(turn.code).toBe("client_secret_invalid");
    }
  });
});

describe("npm start and other origins", () => {
  it("refuses a mint from another origin, with the preflight-free text/plain POST or JSON", async () => {
    for (const contentType of ["text/plain", "application/json"]) {
      const mint = await send("/demo/client_secret", {
        method: "POST",
        headers: { origin: siteOrigin, "content-type": contentType },
        body: "{}",
      });
      expect(mint.status, mint.body).toBe(403);
      expect(mint.body).not.toContain("ek_");
    }
  });

  it("answers no other origin's preflight, and refuses its requests and sockets", async () => {
    const preflight = await fetch(`${started().origin}/v1/responses`, {
      method: "OPTIONS",
      headers: {
        origin: siteOrigin,
        "access-control-request-method": "POST",
        "access-control-request-headers": "authorization, content-type",
      },
    });
    expect(preflight.headers.get("access-control-allow-origin")).toBeNull();
    const models = await send("/v1/models", {
      headers: { origin: siteOrigin, authorization: `Bearer ${LOCAL_DEV_KEY}` },
    });
    expect(models.status).toBe(403);
    expect(models.code).toBe("origin_not_allowed");
    const status = await new Promise<number>((resolve) => {
      const ws = new WebSocket(`${started().origin.replace("http", "ws")}/v1/responses`, {
        headers: { origin: siteOrigin, authorization: `Bearer ${LOCAL_DEV_KEY}` },
      });
      ws.once("open", () => {
        ws.close();
        resolve(101);
      });
      ws.once("unexpected-response", (_req, res) => resolve(res.statusCode ?? 0));
      ws.once("error", () => resolve(-1));
    });
    expect(status).toBe(403);
  });

  it("a page on another origin in Chromium can neither mint nor call the API", async () => {
    const page = await browser!.newPage();
    await page.goto(`${siteOrigin}/`);
    const outcomes = await page.evaluate(
      async ({ target, devKey }) => {
        const attempt = async (url: string, init: RequestInit): Promise<string> => {
          try {
            const res = await fetch(url, init);
            return `${res.status} ${await res.text()}`;
          } catch (error) {
            return `blocked: ${(error as Error).name}`;
          }
        };
        return {
          // A simple request: no preflight, so it reaches the server; its answer must be no secret.
          textPlainMint: await attempt(`${target}/demo/client_secret`, {
            method: "POST",
            headers: { "content-type": "text/plain" },
            body: "{}",
          }),
          jsonMint: await attempt(`${target}/demo/client_secret`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: "{}",
          }),
          devKeyTurn: await attempt(`${target}/v1/responses`, {
            method: "POST",
            headers: { authorization: `Bearer ${devKey}`, "content-type": "application/json" },
            body: JSON.stringify({ model: "deltagate-sim", input: "hello" }),
          }),
        };
      },
      { target: started().origin, devKey: LOCAL_DEV_KEY },
    );
    await page.close();
    expect(outcomes).toEqual({
      textPlainMint: "blocked: TypeError",
      jsonMint: "blocked: TypeError",
      devKeyTurn: "blocked: TypeError",
    });
  });

  it("the demo page on the stack's own origins still mints a secret that works", async () => {
    for (const origin of [started().origin, `http://localhost:${started().port}`]) {
      const page = await browser!.newPage();
      const res = await page.goto(`${origin}/demo/`);
      expect(res?.status()).toBe(200);
      const outcome = await page.evaluate(async () => {
        const mint = await fetch("/demo/client_secret", {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: "{}",
        });
        if (!mint.ok) return `mint ${mint.status} ${await mint.text()}`;
        const { value } = (await mint.json()) as { value: string };
        const models = await fetch("/v1/models", { headers: { authorization: `Bearer ${value}` } });
        return `models ${models.status}`;
      });
      await page.close();
      expect(outcome, origin).toBe("models 200");
    }
  });
});
