/**
 * Usage that shows the cache and the price (issue #26.5), through real turns on the Anthropic
 * route (the simulator's prompt cache; breakpoints placed by Deltagate): the Response's usage
 * carries the cached and cache-write tokens; the ledger and `GET /v1/usage` add them up; with
 * `PRICES` (vitest.config.ts prices `sim-claude` at Claude Sonnet's list prices) each turn's cost
 * is booked in the ledger, summed in `GET /v1/usage` (per day and model, and in `total`), and
 * reported on the turn's timing event and log line — the same figure everywhere; a model without
 * a price (`deltagate-sim`) has a null cost, never 0. And a session's outbox made before these
 * columns keeps its waiting rows when it gets them.
 */
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import { dayOf } from "../../../src/tenancy/clock.ts";
import { UsageOutbox } from "../../../src/tenancy/usage-outbox.ts";
import type { UsageBucket, UsageTotal } from "../../../src/tenancy/usage-report.ts";
import { tenantWithKey } from "../../support/admin.ts";
import { SHELL_TOOL } from "../../support/fixtures.ts";
import { sessionStub } from "../../support/session-stub.ts";
import { testId } from "../../support/test-id.ts";
import { connect, type Frame, uniqueSession, workerFetch } from "../../support/ws-client.ts";

const CLAUDE = "sim-claude";
const UNPRICED = "deltagate-sim";
/** `PRICES` of `sim-claude` in vitest.config.ts, USD per million tokens. */
const PRICE = { input: 3, cached_input: 0.3, cache_write: 3.75, output: 15 };

interface Usage {
  input_tokens: number;
  input_tokens_details: { cached_tokens: number; cache_write_tokens: number };
  output_tokens: number;
}

interface Turn {
  id: string;
  usage: Usage;
  output: Array<Record<string, unknown>>;
}

/** The cost the configured price gives `usage`, in nano-dollars (the test's own arithmetic). */
function expectedNano(usage: Usage): number {
  const { cached_tokens: cached, cache_write_tokens: written } = usage.input_tokens_details;
  const uncached = usage.input_tokens - cached - written;
  return Math.round(
    (uncached * PRICE.input +
      cached * PRICE.cached_input +
      written * PRICE.cache_write +
      usage.output_tokens * PRICE.output) *
      1_000,
  );
}

/** One turn's Response (its terminal event, completed). */
function turnOf(frames: Frame[]): Turn {
  const terminal = frames.at(-1) as unknown as { type: string; response: Turn };
  expect(terminal.type).toBe("response.completed");
  return terminal.response;
}

async function usageOf(key: string): Promise<{ data: UsageBucket[]; total: UsageTotal }> {
  const response = await workerFetch("/v1/usage", { headers: { authorization: `Bearer ${key}` } });
  expect(response.status).toBe(200);
  return (await response.json()) as { data: UsageBucket[]; total: UsageTotal };
}

describe("usage with the cache and the price", () => {
  it("shows cached and cache-write tokens and each turn's cost in the Response, the timing event, the log line, the ledger and GET /v1/usage", async () => {
    const log = vi.spyOn(console, "log");
    const { key, tenant } = await tenantWithKey("cost");
    const marker = `cost-${testId()}`;
    const instructions = `${marker} You are a careful assistant. `.repeat(20);
    const ws = await connect({
      key,
      session: uniqueSession("cost"),
      headers: { "x-deltagate-timing": "1" },
    });
    const settings = { model: CLAUDE, instructions, tools: [SHELL_TOOL] };
    // Turn 1 writes the prefix to Claude's cache; turn 2 reads it.
    ws.send({ type: "response.create", ...settings, input: "run `ls` [sim:tools=1]" });
    const first = turnOf(await ws.turn(0));
    const call = first.output.find((item) => item.type === "function_call");
    ws.send({
      type: "response.create",
      ...settings,
      previous_response_id: first.id,
      input: [{ type: "function_call_output", call_id: call?.call_id, output: "file-a\nfile-b" }],
    });
    const second = turnOf(await ws.turn(1));
    // A model without a price.
    ws.send({ type: "response.create", model: UNPRICED, input: "hi [sim:tokens=5]" });
    const unpriced = turnOf(await ws.turn(2));
    // Each turn's `deltagate.timing` follows its terminal event.
    await ws.until((frames) => frames.filter((frame) => frame.type === "deltagate.timing").length === 3);
    ws.close();
    const timingOf = (id: string) =>
      (
        ws.frames.find(
          (frame) => frame.type === "deltagate.timing" && frame.response_id === id,
        ) as unknown as {
          turn: Record<string, unknown>;
        }
      ).turn;

    // The Response's usage: the cache as the provider reported it.
    expect(first.usage.input_tokens_details.cache_write_tokens).toBeGreaterThan(0);
    expect(first.usage.input_tokens_details.cached_tokens).toBe(0);
    expect(second.usage.input_tokens_details.cached_tokens).toBeGreaterThan(0);
    const turns = [first, second];
    const nanos = turns.map((turn) => expectedNano(turn.usage));
    // Cache reads make turn 2 cheaper per input token than turn 1's writes.
    expect(nanos[1]! / second.usage.input_tokens).toBeLessThan(nanos[0]! / first.usage.input_tokens);

    // The timing event and the log line: the turn's tokens and cost, as booked. The line is
    // written on the event loop's next turn (src/pipeline/turn-timing.ts `logTurn`).
    await vi.waitFor(() =>
      expect(log.mock.calls.filter((args) => String(args[0]).includes(unpriced.id))).not.toHaveLength(0),
    );
    const logged = (id: string) => {
      const lines = log.mock.calls
        .map((args) => String(args[0]))
        .filter((line) => line.includes('"type":"deltagate.turn"') && line.includes(id));
      expect(lines).toHaveLength(1);
      return JSON.parse(lines[0]!) as Record<string, unknown>;
    };
    for (const [index, turn] of turns.entries()) {
      const facts = {
        input_tokens: turn.usage.input_tokens,
        cached_tokens: turn.usage.input_tokens_details.cached_tokens,
        cache_write_tokens: turn.usage.input_tokens_details.cache_write_tokens,
        output_tokens: turn.usage.output_tokens,
        cost_usd: nanos[index]! / 1e9,
      };
      expect(timingOf(turn.id), `turn ${index}`).toMatchObject(facts);
      expect(logged(turn.id), `turn ${index}`).toMatchObject(facts);
    }
    expect(timingOf(unpriced.id)).toMatchObject({ cost_usd: null, cached_tokens: 0 });
    expect(logged(unpriced.id)).toMatchObject({ cost_usd: null });
    log.mockRestore();

    // GET /v1/usage (from the tenant's ledger, once the session's outbox was flushed).
    await expect.poll(async () => (await usageOf(key)).total.turns, { timeout: 15_000 }).toBe(3);
    const { data, total } = await usageOf(key);
    const claude = data.find((bucket) => bucket.model === CLAUDE);
    const sum = (pick: (usage: Usage) => number) => turns.reduce((n, turn) => n + pick(turn.usage), 0);
    const claudeNano = nanos[0]! + nanos[1]!;
    expect(claude).toMatchObject({
      day: dayOf(Date.now()),
      turns: 2,
      input_tokens: sum((u) => u.input_tokens),
      cached_tokens: sum((u) => u.input_tokens_details.cached_tokens),
      cache_write_tokens: sum((u) => u.input_tokens_details.cache_write_tokens),
      output_tokens: sum((u) => u.output_tokens),
      cost_usd: claudeNano / 1e9,
      priced_turns: 2,
    });
    expect(data.find((bucket) => bucket.model === UNPRICED)).toMatchObject({
      turns: 1,
      cost_usd: null,
      priced_turns: 0,
    });
    expect(total).toMatchObject({
      turns: 3,
      cached_tokens: claude?.cached_tokens,
      cache_write_tokens: claude?.cache_write_tokens,
      cost_usd: claudeNano / 1e9,
      priced_turns: 2,
    });
    // The ledger itself: cost in exact nano-dollars.
    const rows = await env.TENANTS!.getByName(tenant).usage(dayOf(Date.now()));
    const ledger = rows.find((row) => row.model === CLAUDE);
    expect(ledger).toMatchObject({ cost_nano_usd: claudeNano, priced_turns: 2 });
    expect(rows.find((row) => row.model === UNPRICED)).toMatchObject({ cost_nano_usd: null });
  });

  it("adds the cache and cost columns to an outbox made before them, keeping its waiting rows", async () => {
    const { tenant, keyId } = await tenantWithKey("old-outbox");
    const stub = sessionStub(tenant, uniqueSession("old-outbox"));
    const batch = await runInDurableObject(stub, (_instance, state) => {
      const sql = state.storage.sql;
      // The outbox as it was before issue #26.5, with one row waiting.
      sql.exec("DROP TABLE IF EXISTS usage_outbox");
      sql.exec(`CREATE TABLE usage_outbox (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        day TEXT NOT NULL, model TEXT NOT NULL, key_id TEXT NOT NULL, status TEXT NOT NULL,
        input_tokens INTEGER NOT NULL, output_tokens INTEGER NOT NULL, at INTEGER NOT NULL)`);
      sql.exec(
        "INSERT INTO usage_outbox (day, model, key_id, status, input_tokens, output_tokens, at) VALUES ('2026-12-01', ?, ?, 'completed', 5, 7, 1)",
        CLAUDE,
        keyId,
      );
      const outbox = new UsageOutbox(sql);
      outbox.add(
        {
          day: "2026-12-01",
          model: CLAUDE,
          keyId,
          status: "completed",
          inputTokens: 100,
          cachedTokens: 80,
          cacheWriteTokens: 10,
          outputTokens: 3,
          costNanoUsd: 123,
        },
        2,
      );
      return new UsageOutbox(sql).batch(); // a second construction finds the columns there
    });
    expect(batch.map(({ seq: _seq, ...entry }) => entry)).toEqual([
      {
        day: "2026-12-01",
        model: CLAUDE,
        keyId,
        status: "completed",
        inputTokens: 5,
        cachedTokens: 0,
        cacheWriteTokens: 0,
        outputTokens: 7,
        costNanoUsd: null,
      },
      {
        day: "2026-12-01",
        model: CLAUDE,
        keyId,
        status: "completed",
        inputTokens: 100,
        cachedTokens: 80,
        cacheWriteTokens: 10,
        outputTokens: 3,
        costNanoUsd: 123,
      },
    ]);
  });
});
