/**
 * A tenant's own upstream key end to end (issue #19 §1), against `npm start`'s stack (simulator
 * in WebSocket mode behind `wrangler dev`): set with `npm run admin -- upstream-key set` (read
 * from a variable), the tenant's turns reach the upstream with it; removed, they are back on the
 * deployment's key within the documented bound (30 s) without any restart; wrangler's output
 * never shows it. The simulator records a fingerprint of each request's bearer key.
 */
import { createHash } from "node:crypto";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../../scripts/local-stack.ts";
import { runProcess } from "../support/e2e-process.ts";
import { useSharedStack } from "../support/e2e-stack.ts";
import { testId } from "../support/test-id.ts";

const e2e = useSharedStack();

/** The deployment's key under `npm start` (scripts/local-stack.ts). */
const DEPLOYMENT_KEY = "sim-key";

function fingerprint(key: string): string {
  return createHash("sha256").update(key).digest("hex").slice(0, 16);
}

async function admin(args: string[], env: Record<string, string> = {}): Promise<string> {
  const port = new URL(e2e.stack.origin).port;
  const result = await runProcess(process.execPath, [join(REPO_ROOT, "scripts/admin.ts"), ...args], {
    cwd: REPO_ROOT,
    // its admin key is in the local secrets file of the stack's state (scripts/local-secrets.ts)
    env: {
      ...process.env,
      PORT: port,
      DELTAGATE_STATE_DIR: e2e.stack.stateDir,
      DELTAGATE_ADMIN_KEY: "",
      DELTAGATE_ADMIN_URL: "",
      ...env,
    },
    timeoutMs: 30_000,
  });
  expect(result.code, result.stderr).toBe(0);
  return result.stdout;
}

/**
 * Runs one turn with `key` (continuing `chain.last` when set, so it runs in the same session,
 * which holds the key it read) and returns the bearer fingerprint the simulator saw for it.
 */
async function keySeen(key: string, chain: { last?: string } = {}): Promise<unknown> {
  const { stack } = e2e;
  const marker = `byok-e2e-${testId()}`;
  const turn = await fetch(`${stack.origin}/v1/responses`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({
      model: "deltagate-sim",
      input: `${marker} [sim:tokens=3]`,
      ...(chain.last ? { previous_response_id: chain.last } : {}),
    }),
  });
  expect(turn.status, await turn.clone().text()).toBe(200);
  chain.last = ((await turn.json()) as { id: string }).id;
  const url = `${stack.simulatorUrl}/_sim/requests?contains=${encodeURIComponent(marker)}`;
  const { data } = (await (await fetch(url)).json()) as { data: { keyFingerprint: unknown }[] };
  expect(data).toHaveLength(1);
  return data[0]?.keyFingerprint;
}

describe("a tenant's own upstream key, end to end", () => {
  it("is used for the tenant's turns, and no longer within the bound once removed", async () => {
    const tenant = `byok-${Date.now()}`;
    await admin(["tenants", "create", tenant]);
    const { key } = JSON.parse(await admin(["keys", "create", tenant, "--json"])) as { key: string };
    const own = `tenantOwnE2e${testId().replaceAll("-", "")}`;
    const set = await admin(["upstream-key", "set", tenant, "--from-env", "BYOK_E2E_KEY", "--json"], {
      BYOK_E2E_KEY: own,
    });
    expect(set).not.toContain(own);
    const chain: { last?: string } = {};
    expect(await keySeen(key, chain)).toBe(fingerprint(own));
    expect(await keySeen(key, chain)).toBe(fingerprint(own)); // the same session, warm
    expect(await keySeen("dg-local-dev-key")).toBe(fingerprint(DEPLOYMENT_KEY)); // another tenant
    await admin(["upstream-key", "remove", tenant]);
    const removedAt = Date.now();
    expect(await keySeen(key)).toBe(fingerprint(DEPLOYMENT_KEY)); // a new session asks its tenant
    // The session that holds the key, continued: inside the bound it may still use it, past it never.
    await expect
      .poll(() => keySeen(key, chain), { timeout: 40_000, interval: 2_000 })
      .toBe(fingerprint(DEPLOYMENT_KEY));
    expect(Date.now() - removedAt).toBeLessThan(35_000); // the 30 s bound, plus a poll's slack
    expect(await e2e.stack.output()).not.toContain(own);
  });
});
