/**
 * The session schema's migrations (src/store/migrations.ts): pending migrations apply in one
 * transaction, so a failing one leaves the schema and its version as they were; applied ones are
 * never run again.
 */
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { applyMigrations } from "../../src/store/migrations.ts";
import { sessionStub } from "../support/session-stub.ts";
import { uniqueSession } from "../support/ws-client.ts";

const version = (sql: SqlStorage) =>
  sql.exec<{ value: string }>("SELECT value FROM meta WHERE key = 'schema_version'").toArray()[0]?.value ??
  null;
const tables = (sql: SqlStorage) =>
  sql
    .exec<{ name: string }>(
      "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'mig_%' ORDER BY name",
    )
    .toArray()
    .map((row) => row.name);

describe("session schema migrations", () => {
  it("applies pending migrations all or nothing, and skips applied ones", async () => {
    await runInDurableObject(sessionStub("tenant-a", uniqueSession("migrations")), (_instance, state) => {
      const sql = state.storage.sql;
      const base = Number(version(sql)); // the session's own schema, applied on its wake
      const one = { version: base + 1, sql: "CREATE TABLE mig_one (x INTEGER)" };
      const two = { version: base + 2, sql: "CREATE TABLE mig_two (x INTEGER)" };
      const broken = { version: base + 3, sql: "CREATE TABLE mig_three (x INTEGER); NOT SQL" };
      expect(() => applyMigrations(state.storage, [one, two, broken])).toThrow();
      expect(tables(sql)).toEqual([]);
      expect(version(sql)).toBe(String(base));

      expect(applyMigrations(state.storage, [one, two])).toBe(base + 2);
      expect(tables(sql)).toEqual(["mig_one", "mig_two"]);
      // Applied ones are skipped (running mig_one again would fail: its table exists).
      expect(applyMigrations(state.storage, [one, two])).toBe(base + 2);
      expect(
        applyMigrations(state.storage, [one, two, { ...broken, sql: "CREATE TABLE mig_three (x)" }]),
      ).toBe(base + 3);
    });
  });
});
