/**
 * Persisted event logs of store:true responses (migration 0003). Owns chunking: a log is a JSON
 * array of events split into chunks of at most `CHUNK_BYTES`, so no row nears SQLite's 2 MB limit
 * (https://developers.cloudflare.com/durable-objects/platform/limits/). An event larger than a
 * chunk on its own (a `response.completed` carrying a model's multi-MB output) is split into piece
 * rows, `{"piece":i,"of":n,"text":…}` — a JSON object where a chunk is an array, so logs written
 * before pieces existed read the same.
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
/**
 * Largest piece of one oversized event, in UTF-16 code units: its JSON-escaped row stays under
 * 2 MB even when every unit is a 3-byte UTF-8 character or needs a 2-unit escape.
 */
const PIECE_UNITS = 256 * 1024;

/** A row holding one piece of an event too large for a chunk of its own. */
interface Piece {
  piece: number;
  of: number;
  text: string;
}

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
    const insert = (data: string) =>
      this.sql.exec(
        "INSERT INTO event_logs (response_id, chunk, data) VALUES (?, ?, ?)",
        responseId,
        index++,
        data,
      );
    const flush = () => {
      if (chunk.length === 0) return;
      insert(`[${chunk.join(",")}]`);
      chunk = [];
      size = 0;
    };
    for (const json of events) {
      if (size + json.length > CHUNK_BYTES) flush();
      if (json.length > CHUNK_BYTES) {
        const of = Math.ceil(json.length / PIECE_UNITS);
        for (let piece = 0; piece < of; piece++) {
          const text = json.slice(piece * PIECE_UNITS, (piece + 1) * PIECE_UNITS);
          insert(JSON.stringify({ piece, of, text } satisfies Piece));
        }
        continue;
      }
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
    const events: ServerEvent[] = [];
    let pieces: string[] = [];
    for (const row of rows) {
      const value = JSON.parse(row.data) as ServerEvent[] | Piece;
      if (Array.isArray(value)) {
        events.push(...value);
        continue;
      }
      pieces.push(value.text);
      if (value.piece === value.of - 1) {
        events.push(JSON.parse(pieces.join("")) as ServerEvent);
        pieces = [];
      }
    }
    return events;
  }

  /** Deletes the logs of the given responses. */
  delete(responseIds: readonly string[]): void {
    for (const id of responseIds) this.sql.exec("DELETE FROM event_logs WHERE response_id = ?", id);
  }
}
