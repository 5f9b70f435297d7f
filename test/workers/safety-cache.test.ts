/**
 * The verdict cache in a session Durable Object's SQLite (src/safety/verdict-cache.ts, migration
 * 4): verdicts read back only under the classifier that produced them, chain marks exported and
 * imported, and both tables kept bounded (oldest verdicts and marks of deleted responses pruned).
 */
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { VerdictCache } from "../../src/safety/verdict-cache.ts";
import { sessionStub } from "../support/session-stub.ts";
import { uniqueSession } from "../support/ws-client.ts";

const clean = { flagged: false, categories: { x: false }, scores: { x: 0 } };
const flagged = { flagged: true, categories: { x: true }, scores: { x: 1 } };

describe("safety verdict cache", () => {
  it("reads verdicts per classifier, marks chains, and stays bounded", async () => {
    await runInDurableObject(sessionStub("tenant-a", uniqueSession("safety-cache")), (_instance, state) => {
      const sql = state.storage.sql;
      let clock = 0;
      const cache = new VerdictCache(sql, () => ++clock, { maxVerdicts: 20, pruneEvery: 10 });
      cache.store("rules:a", [
        { hash: "h1", verdict: clean },
        { hash: "h2", verdict: flagged },
      ]);
      expect([...cache.lookup("rules:a", ["h1", "h2", "h3", "h1"])]).toEqual([
        ["h1", clean],
        ["h2", flagged],
      ]);
      expect(cache.lookup("moderation:m", ["h1"]).size).toBe(0);
      // More hashes than one statement may bind.
      const many = Array.from({ length: 250 }, (_, i) => `many-${i}`);
      expect(cache.lookup("rules:a", many).size).toBe(0);

      cache.markChain("resp_gone", "policy-1", clean);
      expect(cache.chain("resp_gone", "policy-1")).toEqual(clean);
      expect(cache.chain("resp_gone", "policy-2")).toBeNull();
      expect(cache.exportChain("resp_gone")).toEqual([{ policy: "policy-1", verdict: clean }]);
      cache.importChain("resp_copy", [{ policy: "policy-9", verdict: flagged }]);
      expect(cache.chain("resp_copy", "policy-9")).toEqual(flagged);

      // 30 more verdicts: past 20 rows the oldest tenth goes; marks of responses that do not exist go.
      cache.store(
        "rules:a",
        Array.from({ length: 30 }, (_, i) => ({ hash: `n${i}`, verdict: clean })),
      );
      const rows = sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM safety_verdicts").one().n;
      expect(rows).toBe(32 - 2);
      expect(cache.lookup("rules:a", ["h1", "h2"]).size).toBe(0); // the oldest
      expect(cache.chain("resp_gone", "policy-1")).toBeNull();
    });
  });
});
