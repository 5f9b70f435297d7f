/**
 * Event logs hold events of any size in rows under SQLite's 2 MB row limit
 * (src/store/event-log-store.ts): a `response.completed` carrying a model's multi-MB output is
 * split into piece rows and read back identical, between ordinary chunks. Local SQLite accepts
 * rows of several MB, so the test measures every row itself.
 */
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { ServerEvent } from "../../../src/protocol/server-events.ts";
import { EventLogStore } from "../../../src/store/event-log-store.ts";
import { sessionStub } from "../../support/session-stub.ts";
import { uniqueSession } from "../../support/ws-client.ts";

/** SQLite rows of a Durable Object in production: at most 2 MB. */
const MAX_ROW_BYTES = 2_000_000;

describe("hostile: oversized events in the event log", () => {
  it("splits an event larger than a chunk into rows under 2 MB and reads it back identical", async () => {
    // 3 MB of text mixing ASCII, quotes that JSON escapes, CJK and an emoji cut at every offset.
    const text = 'a"b\\c 日本語 😀 '.repeat(200_000).slice(0, 3_000_000);
    const events: ServerEvent[] = [
      { type: "response.created", sequence_number: 0 },
      { type: "response.output_text.done", sequence_number: 1, text },
      { type: "response.completed", sequence_number: 2, response: { output_text: text } },
    ];
    await runInDurableObject(sessionStub("tenant-a", uniqueSession("large-events")), (_instance, state) => {
      const log = new EventLogStore(state.storage.sql);
      // The log takes each event's JSON text as it was sent (serialized once, src/engine/turn-emitter.ts).
      log.append(
        "resp_large",
        events.slice(0, 2).map((event) => JSON.stringify(event)),
      );
      log.append(
        "resp_large",
        events.slice(2).map((event) => JSON.stringify(event)),
      );
      const rows = state.storage.sql
        .exec<{ bytes: number }>(
          "SELECT LENGTH(CAST(data AS BLOB)) AS bytes FROM event_logs WHERE response_id = ?",
          "resp_large",
        )
        .toArray();
      expect(rows.length).toBeGreaterThan(3);
      for (const row of rows) expect(row.bytes).toBeLessThan(MAX_ROW_BYTES);
      expect(log.read("resp_large")).toEqual(events);
    });
  });
});
