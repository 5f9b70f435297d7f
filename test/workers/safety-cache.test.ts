/**
 * The verdict cache in a session Durable Object's SQLite (src/safety/verdict-cache.ts, migration
 * 4): verdicts read back only under the classifier that produced them, chain marks exported and
 * imported, and both tables kept bounded (oldest verdicts and marks of deleted responses pruned);
 * a local classifier's verdicts, and the chain marks of a policy of local classifiers only, kept in
 * memory only.
 */
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { VerdictCache } from "../../src/safety/verdict-cache.ts";
import { sessionStub } from "../support/session-stub.ts";
import { uniqueSession } from "../support/ws-client.ts";

const clean = { flagged: false, categories: { x: false }, scores: { x: 0 } };
const flagged = { flagged: true, categories: { x: true }, scores: { x: 1 } };
const remoteA = { id: "moderation:a", local: false };

describe("safety verdict cache", () => {
  it("reads verdicts per classifier, marks chains, and stays bounded", async () => {
    await runInDurableObject(sessionStub("tenant-a", uniqueSession("safety-cache")), (_instance, state) => {
      const sql = state.storage.sql;
      let clock = 0;
      const cache = new VerdictCache(sql, () => ++clock, { maxVerdicts: 20, pruneEvery: 10 });
      cache.store(remoteA, [
        { hash: "h1", verdict: clean },
        { hash: "h2", verdict: flagged },
      ]);
      expect([...cache.lookup(remoteA, ["h1", "h2", "h3", "h1"])]).toEqual([
        ["h1", clean],
        ["h2", flagged],
      ]);
      expect(cache.lookup({ id: "moderation:m", local: false }, ["h1"]).size).toBe(0);
      // More hashes than one statement may bind.
      const many = Array.from({ length: 250 }, (_, i) => `many-${i}`);
      expect(cache.lookup(remoteA, many).size).toBe(0);

      cache.markChain("resp_gone", "policy-1", clean, false);
      expect(cache.chain("resp_gone", "policy-1")).toEqual(clean);
      expect(cache.chain("resp_gone", "policy-2")).toBeNull();
      expect(cache.exportChain("resp_gone")).toEqual([{ policy: "policy-1", verdict: clean }]);
      cache.importChain("resp_copy", [{ policy: "policy-9", verdict: flagged }]);
      expect(cache.chain("resp_copy", "policy-9")).toEqual(flagged);

      // 30 more verdicts: past 20 rows the oldest tenth goes; marks of responses that do not exist go.
      cache.store(
        remoteA,
        Array.from({ length: 30 }, (_, i) => ({ hash: `n${i}`, verdict: clean })),
      );
      const rows = sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM safety_verdicts").one().n;
      expect(rows).toBe(32 - 2);
      expect(cache.lookup(remoteA, ["h1", "h2"]).size).toBe(0); // the oldest
      expect(cache.chain("resp_gone", "policy-1")).toBeNull();
    });
  });

  it("keeps a local classifier's verdicts in memory only: no row, and gone after a wake (issue #27)", async () => {
    await runInDurableObject(
      sessionStub("tenant-a", uniqueSession("safety-cache-local")),
      (_instance, state) => {
        const sql = state.storage.sql;
        const rules = { id: "rules:local", local: true };
        const rows = () => sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM safety_verdicts").one().n;
        const before = rows();
        const cache = new VerdictCache(sql);
        cache.store(rules, [{ hash: "h1", verdict: flagged }]);
        expect([...cache.lookup(rules, ["h1", "h2"])]).toEqual([["h1", flagged]]);
        expect(rows()).toBe(before);
        expect(new VerdictCache(sql).lookup(rules, ["h1"]).size).toBe(0);
        // A remote classifier's verdicts are rows, read back by a fresh cache (after a wake).
        cache.store(remoteA, [{ hash: "h1", verdict: clean }]);
        expect(rows()).toBe(before + 1);
        expect([...new VerdictCache(sql).lookup(remoteA, ["h1"])]).toEqual([["h1", clean]]);
      },
    );
  });

  it("keeps the chain marks of local classifiers in memory only: read, exported and forgotten, no row (issue #27)", async () => {
    await runInDurableObject(
      sessionStub("tenant-a", uniqueSession("safety-cache-local-chain")),
      (_instance, state) => {
        const sql = state.storage.sql;
        const rows = () => sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM safety_chains").one().n;
        const before = rows();
        const cache = new VerdictCache(sql);
        cache.markChain("resp_local", "rules-policy", flagged, true);
        cache.markChain("resp_local", "remote-policy", clean, false);
        expect(rows()).toBe(before + 1);
        expect(cache.chain("resp_local", "rules-policy")).toEqual(flagged);
        expect(cache.exportChain("resp_local")).toEqual([
          { policy: "remote-policy", verdict: clean },
          { policy: "rules-policy", verdict: flagged },
        ]);
        // After a wake (a fresh cache), only the stored mark is known; the local chain is checked again.
        expect(new VerdictCache(sql).chain("resp_local", "rules-policy")).toBeNull();
        expect(new VerdictCache(sql).chain("resp_local", "remote-policy")).toEqual(clean);
        cache.forgetResponses(["resp_local"]);
        expect(cache.chain("resp_local", "rules-policy")).toBeNull();
        expect(cache.exportChain("resp_local")).toEqual([]);
      },
    );
  });

  it("counts a row it cannot read as absent, so its text is checked again", async () => {
    await runInDurableObject(
      sessionStub("tenant-a", uniqueSession("safety-cache-bad")),
      (_instance, state) => {
        const sql = state.storage.sql;
        for (const [hash, text] of [
          ["bad-json", "{not json"],
          ["bad-shape", '{"flagged":"yes"}'],
        ]) {
          sql.exec(
            "INSERT INTO safety_verdicts (classifier, hash, flagged, verdict, checked_at) VALUES (?, ?, 0, ?, 0)",
            remoteA.id,
            hash,
            text,
          );
        }
        sql.exec("INSERT INTO safety_chains (response_id, policy, verdict) VALUES ('resp_bad', 'p', 'nope')");
        const cache = new VerdictCache(sql);
        expect(cache.lookup(remoteA, ["bad-json", "bad-shape"]).size).toBe(0);
        expect(cache.chain("resp_bad", "p")).toBeNull();
        expect(cache.exportChain("resp_bad")).toEqual([]);
      },
    );
  });
});
