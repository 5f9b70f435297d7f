/**
 * A session's view of its tenant's own upstream key (src/tenancy/tenant-upstream-key.ts): unsealed
 * only in memory and taught to the redactor; used only on routes to the default upstream; at most
 * `UPSTREAM_KEY_TTL_MS` after the tenant confirmed it (a turn past that syncs first); dropped at
 * once when a snapshot says the tenant has none; a key that cannot be unsealed fails the turn.
 */
import { describe, expect, it } from "vitest";
import { SecretRedactor } from "../../../src/secrets/redactor.ts";
import { controlKeys, sealUpstreamKey } from "../../../src/tenancy/control-crypto.ts";
import { TenantUpstreamKey, UPSTREAM_KEY_TTL_MS } from "../../../src/tenancy/tenant-upstream-key.ts";
import { parseRoutes } from "../../../src/upstream/routes.ts";

const SECRET = "unit-control-secret-0123456789";
const DEFAULT_URL = "https://api.example/v1";
const [toDefault, toOther] = parseRoutes(
  JSON.stringify([
    { model: "a", api: "responses-http", base_url: DEFAULT_URL, api_key_var: "K" },
    { model: "b", api: "responses-http", base_url: "https://other.example/v1", api_key_var: "K" },
  ]),
  { baseUrl: DEFAULT_URL, apiKey: "deployment-key", api: "responses-http" },
  () => "deployment-key",
);

async function seal(tenant: string, key: string): Promise<string> {
  const keys = controlKeys(SECRET);
  if (!keys) throw new Error("no keys");
  return sealUpstreamKey(await keys, tenant, key);
}

function setup(options: { tenant?: string; next?: () => Promise<string | null> } = {}) {
  const redactor = new SecretRedactor([]);
  let changes = 0;
  let syncs = 0;
  const state: { key: TenantUpstreamKey | null } = { key: null };
  const key = new TenantUpstreamKey({
    tenant: () => options.tenant ?? "acme",
    controlSecret: SECRET,
    defaultBaseUrl: DEFAULT_URL,
    redactor,
    controlPlane: true,
    sync: async () => {
      syncs++;
      const sealed = options.next ? await options.next() : null;
      await state.key?.learn(sealed);
    },
  });
  state.key = key;
  key.onChange(() => changes++);
  let now = 1_000_000;
  key.now = () => now;
  return {
    key,
    redactor,
    changes: () => changes,
    syncs: () => syncs,
    advance: (ms: number) => {
      now += ms;
    },
  };
}

describe("TenantUpstreamKey", () => {
  it("replaces the deployment's key on routes to the default upstream only, and the redactor knows it", async () => {
    const { key, redactor, changes } = setup();
    expect(key.keyFor(toDefault!)).toBe("deployment-key");
    await key.learn(await seal("acme", "tenant-own-key-1"));
    expect(key.keyFor(toDefault!)).toBe("tenant-own-key-1");
    expect(key.keyFor(toOther!)).toBe("deployment-key");
    expect(redactor.text("echo tenant-own-key-1")).toBe("echo [redacted]");
    expect(changes()).toBe(1);
  });

  it("is used without a query inside the bound and confirmed by a sync past it", async () => {
    let current: string | null = await seal("acme", "tenant-own-key-1");
    const { key, syncs, advance, changes } = setup({ next: async () => current });
    await key.learn(current);
    advance(UPSTREAM_KEY_TTL_MS - 1);
    expect(key.ready()).toBeNull();
    current = null; // removed by the operator
    advance(1);
    const ready = key.ready();
    expect(ready).not.toBeNull();
    await ready;
    expect(syncs()).toBe(1);
    expect(key.keyFor(toDefault!)).toBe("deployment-key");
    expect(changes()).toBe(2);
    // No key: nothing to confirm, however long the session waits.
    advance(10 * UPSTREAM_KEY_TTL_MS);
    expect(key.ready()).toBeNull();
  });

  it("a snapshot without a key drops it at once; one with a key this session lacks makes the next turn sync", async () => {
    const sealed = await seal("acme", "tenant-own-key-1");
    const { key, syncs } = setup({ next: async () => sealed });
    await key.learn(sealed);
    key.observe(false);
    expect(key.keyFor(toDefault!)).toBe("deployment-key");
    key.observe(true);
    await key.ready();
    expect(syncs()).toBe(1);
    expect(key.keyFor(toDefault!)).toBe("tenant-own-key-1");
  });

  it("fails the turn (503) when the key cannot be unsealed or confirmed, never falling back", async () => {
    const other = await seal("someone-else", "not-ours-key-1"); // bound to another tenant
    const { key } = setup({ next: async () => other });
    await key.learn(other);
    expect(key.keyFor(toDefault!)).toBe("deployment-key");
    await expect(key.ready()).rejects.toMatchObject({ status: 503, code: "upstream_key_unavailable" });
    const unreachable = setup({
      next: async () => {
        throw new Error("tenant unreachable");
      },
    });
    unreachable.key.observe(true);
    await expect(unreachable.key.ready()).rejects.toThrow();
  });
});
