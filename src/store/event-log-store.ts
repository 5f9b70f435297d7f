/**
 * Persisted event logs of store:true responses (migration 0003). Owns chunking: a log is a JSON
 * array of events split into chunks of at most `CHUNK_BYTES`, so no row nears SQLite's 2 MB limit.
 * A log grows by appending chunks: a response streams its events to the client first and appends
 * them here in batches after they were sent (src/engine/turn-emitter.ts), and the last batch with
 * the terminal event goes in the transaction that finishes the response.
 * Invariant: a log is the response's events in `sequence_number` order from 0, with no gap (each
 * append continues where the previous one ended); a finished response's log ends with its
 * terminal event.
 */
import type { ServerEvent } from "../protocol/server-events.ts";

/** Largest chunk of a persisted log, in UTF-16 code units of JSON (≈ bytes for ASCII). */
const CHUNK_BYTES = 512 * 1024;

/** Reads and writes persisted event logs. */
export class EventLogStore {
  private readonly sql: SqlStorage;

  constructor(sql: SqlStorage) {
    this.sql = sql;
  }

  /**
   * Appends events after the response's last logged chunk (one row per `CHUNK_BYTES` of JSON).
   * Cost: one indexed read and the rows written, whatever the log's length so far.
   * @param events each event's JSON text, as it was sent (so it is not serialized again).
   */
  append(responseId: string, events: readonly string[]): void {
    if (events.length === 0) return;
    const last = this.sql
      .exec<{ n: number | null }>("SELECT MAX(chunk) AS n FROM event_logs WHERE response_id = ?", responseId)
      .one().n;
    let index = last === null ? 0 : last + 1;
    let chunk: string[] = [];
    let size = 0;
    const flush = () => {
      if (chunk.length === 0) return;
      this.sql.exec(
        "INSERT INTO event_logs (response_id, chunk, data) VALUES (?, ?, ?)",
        responseId,
        index++,
        `[${chunk.join(",")}]`,
      );
      chunk = [];
      size = 0;
    };
    for (const json of events) {
      if (size + json.length > CHUNK_BYTES) flush();
      chunk.push(json);
      size += json.length + 1;
    }
    flush();
  }

  /** The persisted log of a response, or null when it has none. */
  read(responseId: string): ServerEvent[] | null {
    const rows = this.sql
      .exec<{ data: string }>("SELECT data FROM event_logs WHERE response_id = ? ORDER BY chunk", responseId)
      .toArray();
    if (rows.length === 0) return null;
    return rows.flatMap((row) => JSON.parse(row.data) as ServerEvent[]);
  }

  /** Deletes the logs of the given responses. */
  delete(responseIds: readonly string[]): void {
    for (const id of responseIds) this.sql.exec("DELETE FROM event_logs WHERE response_id = ?", id);
  }
}
