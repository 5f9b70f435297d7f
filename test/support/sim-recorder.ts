/**
 * A test's own view of the simulator's recorder (`GET /_sim/requests`, simulator/server.ts) when
 * several test files share one simulator (the shared stack: e2e-stack.ts `useSharedStack`).
 * Invariant: nothing here clears the recorder or reads all of it; a test finds its own requests by
 * a marker only its own requests carry, and the upstream requests of its conversations by their
 * `prompt_cache_key`, which Deltagate sets on every upstream request (the session's key, unless
 * the client set its own: src/upstream/responses-ws/create-frame.ts) — so a delta-only request,
 * which repeats none of the conversation's text, is still found.
 */
import type { RecordedRequestJson } from "../../simulator/recorder.ts";

/** A record's `prompt_cache_key`, or null. */
function cacheKeyOf(record: RecordedRequestJson): string | null {
  const key = (record.body as { prompt_cache_key?: unknown } | null)?.prompt_cache_key;
  return typeof key === "string" ? key : null;
}

/** Every record whose raw body contains `contains`, in arrival order. */
export async function simRequests(simulatorUrl: string, contains: string): Promise<RecordedRequestJson[]> {
  if (contains === "") throw new Error("simRequests needs a marker: it never lists every test's requests");
  const res = await fetch(`${simulatorUrl}/_sim/requests?contains=${encodeURIComponent(contains)}`);
  if (!res.ok) throw new Error(`GET /_sim/requests answered ${res.status}: ${await res.text()}`);
  return ((await res.json()) as { data: RecordedRequestJson[] }).data;
}

/** The records of the conversations keyed `keys` (their `prompt_cache_key`), in arrival order. */
export async function conversationRequests(
  simulatorUrl: string,
  keys: Iterable<string>,
): Promise<RecordedRequestJson[]> {
  const bySeq = new Map<number, RecordedRequestJson>();
  for (const key of keys) {
    for (const record of await simRequests(simulatorUrl, key)) {
      if (cacheKeyOf(record) === key) bySeq.set(record.seq, record);
    }
  }
  return [...bySeq.values()].sort((a, b) => a.seq - b.seq);
}

/**
 * The generating upstream requests (warm-ups, `generate: false`, left out) of every conversation
 * a request carrying `marker` belongs to: the marked requests' `prompt_cache_key`s, and every
 * request with one of them. A conversation that Deltagate split over two sessions shows as two
 * keys, so the test still sees every request it caused.
 * @throws {Error} when no request carried `marker`.
 */
export async function markedUpstream(simulatorUrl: string, marker: string): Promise<RecordedRequestJson[]> {
  const marked = await simRequests(simulatorUrl, marker);
  if (marked.length === 0) throw new Error(`no upstream request carried ${marker}`);
  const keys = new Set(marked.map(cacheKeyOf).filter((key) => key !== null));
  const unkeyed = marked.filter((record) => cacheKeyOf(record) === null);
  const records = [...(await conversationRequests(simulatorUrl, keys)), ...unkeyed];
  return records
    .sort((a, b) => a.seq - b.seq)
    .filter((record) => (record.body as { generate?: unknown } | null)?.generate !== false);
}
