/**
 * Tenant keys (issue #19): minted by the admin API, shown once, stored only as hashes; a revoked
 * key stops working within the documented bound (30 s, src/tenancy/key-cache.ts); a warm request
 * makes no control-plane query; a never-issued key is refused locally; the admin API refuses
 * tenant keys.
 */
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it } from "vitest";
import { KEY_CACHE_TTL_MS } from "../../../src/tenancy/key-cache.ts";
import { keyCache } from "../../../src/tenancy/resolve-key.ts";
import { admin, tenantWithKey } from "../../support/admin.ts";
import { KEY_A, workerFetch } from "../../support/ws-client.ts";

const models = (key: string) => workerFetch("/v1/models", { headers: { authorization: `Bearer ${key}` } });

afterEach(() => {
  keyCache.now = Date.now;
});

describe("tenant keys", () => {
  it("authenticates a minted key, and a revoked one stops within the bound", async () => {
    const { tenant, key, keyId } = await tenantWithKey("revoke");
    expect((await models(key)).status).toBe(200);
    const revoked = await admin(`/tenants/${tenant}/keys/${keyId}/revoke`, { method: "POST" });
    expect(revoked.status).toBe(200);
    // Inside the bound the isolate may still serve its cached answer…
    const start = Date.now();
    keyCache.now = () => start + KEY_CACHE_TTL_MS - 1_000;
    const soon = await models(key);
    expect([200, 401]).toContain(soon.status);
    // …past it, never.
    keyCache.now = () => start + KEY_CACHE_TTL_MS + 1;
    const late = await models(key);
    expect(late.status).toBe(401);
    expect(((await late.json()) as { error: { code: string } }).error.code).toBe("invalid_api_key");
    const listed = (await (await admin(`/tenants/${tenant}/keys`)).json()) as {
      data: { key_id: string; revoked_at: number | null }[];
    };
    expect(listed.data.find((k) => k.key_id === keyId)?.revoked_at).toBeTypeOf("number");
  });

  it("makes no control-plane query for a warm key", async () => {
    const { key } = await tenantWithKey("warm");
    expect((await models(key)).status).toBe(200);
    const before = keyCache.misses;
    for (let i = 0; i < 5; i++) expect((await models(key)).status).toBe(200);
    expect(keyCache.misses).toBe(before);
  });

  it("refuses a key that was never issued without a lookup, however it is shaped", async () => {
    const { key, tenant } = await tenantWithKey("forged");
    const before = keyCache.misses;
    const forged = [
      `${key.slice(0, -1)}${key.endsWith("0") ? "1" : "0"}`, // the tag broken
      `dgk_${tenant}_000000000000_${"a".repeat(64)}`,
      "sk-not-ours-at-all",
      "",
    ];
    for (const attempt of forged) expect((await models(attempt)).status).toBe(401);
    expect(keyCache.misses).toBe(before);
  });

  it("stores keys only as hashes and shows a new key once", async () => {
    const { tenant, key } = await tenantWithKey("hashes");
    const listed = await (await admin(`/tenants/${tenant}/keys`)).text();
    expect(listed).not.toContain(key);
    const secretPart = key.slice(-64);
    const dump = await runInDurableObject(env.TENANTS!.getByName(tenant), (_instance, state) => {
      const rows: unknown[] = [];
      for (const table of ["tenant", "api_keys", "usage", "meta"]) {
        rows.push(...state.storage.sql.exec(`SELECT * FROM ${table}`).toArray());
      }
      return JSON.stringify(rows);
    });
    expect(dump).not.toContain(secretPart);
    expect(dump).toContain(key.slice(0, key.length - 65)); // the display prefix is kept
  });

  it("a minted key of another tenant finds none of tenant A's responses, on every route", async () => {
    const { key } = await tenantWithKey("crossing");
    const created = await workerFetch("/v1/responses", {
      method: "POST",
      headers: { authorization: `Bearer ${KEY_A}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "deltagate-sim", input: "tenant A's [sim:tokens=3]" }),
    });
    const { id } = (await created.json()) as { id: string };
    const auth = { authorization: `Bearer ${key}`, "content-type": "application/json" };
    for (const [method, path] of [
      ["GET", `/v1/responses/${id}`],
      ["GET", `/v1/responses/${id}?stream=true&starting_after=0`],
      ["GET", `/v1/responses/${id}/input_items`],
      ["POST", `/v1/responses/${id}/cancel`],
      ["DELETE", `/v1/responses/${id}`],
    ] as const) {
      expect((await workerFetch(path, { method, headers: auth })).status, `${method} ${path}`).toBe(404);
    }
    const chained = await workerFetch("/v1/responses", {
      method: "POST",
      headers: auth,
      body: JSON.stringify({ model: "deltagate-sim", input: "x", previous_response_id: id }),
    });
    expect(chained.status).toBe(400);
    expect(((await chained.json()) as { error: { code: string } }).error.code).toBe(
      "previous_response_not_found",
    );
    const still = await workerFetch(`/v1/responses/${id}`, { headers: { authorization: `Bearer ${KEY_A}` } });
    expect(still.status).toBe(200);
  });

  it("refuses tenant keys, minted or configured, on the admin API", async () => {
    const { key } = await tenantWithKey("not-admin");
    for (const attempt of [key, KEY_A, "", "dg-test-admin-not"]) {
      const response = await admin("/tenants", { key: attempt });
      expect(response.status).toBe(401);
    }
    expect((await admin("/tenants")).status).toBe(200);
  });
});
