/**
 * The floor relay's routing: which upstream WebSocket a model's turns go to. It reads the same
 * `UPSTREAMS` table Deltagate runs with in the benchmark (bench/stack.ts), keeping only the
 * Responses WebSocket-mode routes, so the floor and Deltagate reach the same simulator for the
 * same model name.
 * Invariant: pure; a table that is not a JSON array of routes is an error at start, not a
 * silently empty relay.
 */

/** One route of the table, as bench/stack.ts writes it. */
interface RouteEntry {
  model?: unknown;
  api?: unknown;
  base_url?: unknown;
}

/** Model → upstream URL (`http(s)://…/v1/responses`, opened with a fetch upgrade), and the first. */
export interface FloorRoutes {
  byModel: ReadonlyMap<string, string>;
  /** The URL a fresh session warms before its first frame names a model (null: no route). */
  first: string | null;
}

/**
 * Parses `UPSTREAMS` (a JSON array of `{ model, api, base_url }`).
 * @throws {Error} when it is not such an array.
 */
export function parseFloorRoutes(json: string): FloorRoutes {
  const parsed: unknown = JSON.parse(json);
  if (!Array.isArray(parsed)) throw new Error("UPSTREAMS must be a JSON array of routes");
  const byModel = new Map<string, string>();
  for (const entry of parsed as RouteEntry[]) {
    if (entry.api !== "responses-ws") continue;
    if (typeof entry.model !== "string" || typeof entry.base_url !== "string") {
      throw new Error("every UPSTREAMS route needs a string model and base_url");
    }
    byModel.set(entry.model, `${entry.base_url.replace(/\/+$/, "")}/responses`);
  }
  return { byModel, first: byModel.values().next().value ?? null };
}
