/**
 * Client secrets in workerd tests: minting through the real route, minting directly with the test
 * signing key (for secrets the route would not make: expired, of another tenant, signed with
 * another key), and opening sockets the way a browser does (subprotocol, query).
 */

import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { expect } from "vitest";
import { type ClientSecretClaims, mintClientSecret } from "../../src/auth/client-secret.ts";
import type { Env } from "../../src/config/env.ts";
import { createApp } from "../../src/worker/app.ts";
import type { ClientSecretResponse } from "../../src/worker/client-secrets.ts";
import { KEY_A, TestSocket, workerFetch } from "./ws-client.ts";

/** `CLIENT_SECRET_SIGNING_KEY` of the workers project (vitest.config.ts). */
export const TEST_SIGNING_KEY = "test-client-secret-signing-key-0123456789";

/** The response of `POST /v1/client_secrets` (the Worker's own type). */
export type MintedSecret = ClientSecretResponse;

/** Mints through `POST /v1/client_secrets` with a tenant key; fails the test unless it is a 200. */
export async function mintSecret(body: unknown = {}, key = KEY_A): Promise<MintedSecret> {
  const res = await workerFetch("/v1/client_secrets", {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.json()) as MintedSecret;
}

/** Signs claims directly (what the route would never mint: an expired secret, an unknown tenant…). */
export function signSecret(claims: Partial<ClientSecretClaims>, key = TEST_SIGNING_KEY): Promise<string> {
  return mintClientSecret(key, {
    tenant: "tenant-a",
    id: crypto.randomUUID(),
    sessionId: `sess-${crypto.randomUUID()}`,
    expiresAt: Math.floor(Date.now() / 1000) + 600,
    models: null,
    maxTurns: null,
    maxRequestBytes: null,
    ...claims,
  });
}

/** A WebSocket upgrade through the Worker with any credential placement; the raw response. */
export function upgradeWith(
  options: { protocols?: string[]; query?: string; headers?: Record<string, string> } = {},
): Promise<Response> {
  const headers: Record<string, string> = { upgrade: "websocket", ...(options.headers ?? {}) };
  if (options.protocols) headers["sec-websocket-protocol"] = options.protocols.join(", ");
  return workerFetch(`/v1/responses${options.query ? `?${options.query}` : ""}`, { headers });
}

/** Accepts the client end of a 101 (fails the test otherwise). */
export async function accepted(res: Response): Promise<TestSocket> {
  expect(res.status, res.status === 101 ? "" : await res.clone().text()).toBe(101);
  const ws = res.webSocket!;
  ws.accept();
  return new TestSocket(ws);
}

/** The OpenAI error envelope's `error` of a response. */
export async function errorOf(
  res: Response,
): Promise<{ code: string; message: string; param: string | null }> {
  return ((await res.json()) as { error: { code: string; message: string; param: string | null } }).error;
}

/** Calls a fresh Worker app with the workers project's environment plus `overrides` (a setting per test). */
export async function fetchWithEnv(
  overrides: Record<string, string>,
  path: string,
  init?: RequestInit,
): Promise<Response> {
  const ctx = createExecutionContext();
  const res = await createApp().fetch(
    new Request(`http://deltagate.test${path}`, init),
    {
      ...(env as unknown as Env),
      ...overrides,
    } as Env,
    ctx,
  );
  await waitOnExecutionContext(ctx);
  return res;
}
