/**
 * `npm run admin` (scripts/admin.ts) against the local stack `npm start` runs: the seeded dev
 * tenant is listed; a tenant and a key are created (the key printed once) and the key works; its
 * usage shows up; a limit is set; the key is revoked and refused once the Worker's cache bound has
 * passed (or at once in a fresh isolate); the dev tenant's webhook is set to a receiver on this
 * machine (`npm start` allows loopback targets) and a background response's event reaches it,
 * verified by the `openai` SDK (docs/webhooks.md "Try it locally"). The stack is shared with other
 * files (test/support/e2e-stack.ts): the test counts the deliveries of its own response only, and
 * the limit it sets is on its own tenant.
 */
import { join } from "node:path";
import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../../scripts/local-stack.ts";
import { runProcess } from "../support/e2e-process.ts";
import { useSharedStack } from "../support/e2e-stack.ts";
import { type ReceivedAttempt, startWebhookReceiver } from "../support/webhook-receiver.ts";

const e2e = useSharedStack();

async function admin(...args: string[]): Promise<string> {
  const port = new URL(e2e.stack.origin).port;
  const result = await runProcess(process.execPath, [join(REPO_ROOT, "scripts/admin.ts"), ...args], {
    cwd: REPO_ROOT,
    env: {
      ...process.env,
      PORT: port,
      DELTAGATE_STATE_DIR: e2e.stack.stateDir, // its admin key is in the secrets file there
      DELTAGATE_ADMIN_KEY: "",
      DELTAGATE_ADMIN_URL: "",
    },
    timeoutMs: 30_000,
  });
  expect(result.code, result.stderr).toBe(0);
  return result.stdout;
}

describe("npm run admin against the local stack", () => {
  it("creates a tenant and a key, shows usage, sets limits, revokes", async () => {
    const { origin } = e2e.stack;
    // The dev key's tenant exists once it was used.
    expect(
      (await fetch(`${origin}/v1/models`, { headers: { authorization: "Bearer dg-local-dev-key" } })).status,
    ).toBe(200);
    expect(await admin("tenants", "list", "--json")).toContain('"id": "local"');
    const tenant = `cli-${Date.now()}`;
    await admin("tenants", "create", tenant, "--name", "CLI test");
    const created = JSON.parse(await admin("keys", "create", tenant, "--name", "ci", "--json")) as {
      key: string;
      key_id: string;
    };
    expect(created.key.startsWith(`dgk_${tenant}_`)).toBe(true);
    const auth = { authorization: `Bearer ${created.key}`, "content-type": "application/json" };
    const turn = await fetch(`${origin}/v1/responses`, {
      method: "POST",
      headers: auth,
      body: JSON.stringify({ model: "deltagate-sim", input: "hi [sim:tokens=3]" }),
    });
    expect(turn.status).toBe(200);
    const listed = await admin("keys", "list", tenant, "--json");
    expect(listed).not.toContain(created.key);
    expect(listed).toContain(created.key_id);
    await expect
      .poll(async () => JSON.parse(await admin("usage", "--tenant", tenant, "--json")).data.length, {
        timeout: 15_000,
      })
      .toBe(1);
    const limited = JSON.parse(
      await admin("limits", "set", tenant, "--turns-per-minute", "100", "--json"),
    ) as {
      limits: Record<string, unknown>;
    };
    expect(limited.limits.turns_per_minute).toBe(100);
    await admin("keys", "revoke", tenant, created.key_id);
    // Refused within the documented bound (30 s).
    await expect
      .poll(async () => (await fetch(`${origin}/v1/models`, { headers: auth })).status, {
        timeout: 40_000,
        interval: 1_000,
      })
      .toBe(401);
  });

  it("sets the dev tenant's webhook to a local receiver; a background response's event arrives signed", async () => {
    const { origin } = e2e.stack;
    const receiver = await startWebhookReceiver();
    try {
      const url = `${receiver.url}/hooks/local-dev`;
      const out = await admin("webhook", "set", "local", url);
      const secret = out.split("\n")[0] ?? "";
      expect(secret).toMatch(/^whsec_/);
      expect(JSON.parse(await admin("webhook", "show", "local", "--json"))).toMatchObject({ url });
      const created = await fetch(`${origin}/v1/responses`, {
        method: "POST",
        headers: { authorization: "Bearer dg-local-dev-key", "content-type": "application/json" },
        body: JSON.stringify({ model: "deltagate-sim", input: "hi [sim:tokens=3]", background: true }),
      });
      expect(created.status).toBe(200);
      const { id } = (await created.json()) as { id: string };
      // This response's deliveries (another file's background response of the tenant would be
      // delivered here too while the webhook is set).
      const deliveries = async () =>
        (
          (await (await fetch(`${receiver.url}/_ctl/deliveries?name=local-dev`)).json()) as {
            data: ReceivedAttempt[];
          }
        ).data.filter((attempt) => (JSON.parse(attempt.body) as { data?: { id?: unknown } }).data?.id === id);
      await expect.poll(async () => (await deliveries()).length, { timeout: 30_000 }).toBe(1);
      const [attempt] = await deliveries();
      const event = await new OpenAI({ apiKey: "unused", webhookSecret: secret }).webhooks.unwrap(
        attempt!.body,
        attempt!.headers,
      );
      expect(event).toMatchObject({ type: "response.completed", data: { id } });
      await admin("webhook", "remove", "local");
    } finally {
      await receiver.close();
    }
  });
});
