/**
 * Helpers of the safety tests: the marker every classifier of the test stack flags (the
 * simulator's /v1/moderations through its flag words, the rules through `SAFETY_RULES`; both set
 * in vitest.config.ts and global-setup.ts), the directive that makes the simulator's model
 * generate it without it appearing in the input, and HTTP helpers reading raw bytes.
 */
import { KEY_A, workerFetch } from "./ws-client.ts";

/** Flagged by every test classifier; 17 characters (the rules hold back 20). */
export const MARKER = "zebra-flag-marker";

/** `[sim:emit_hex=…]`: the simulator's model weaves `text` into its output. */
export function emitDirective(text: string): string {
  return `[sim:emit_hex=${Buffer.from(text, "utf8").toString("hex")}]`;
}

/** POST /v1/responses with a JSON body; the raw response. */
export function postResponse(
  body: Record<string, unknown>,
  key = KEY_A,
  session?: string,
): Promise<Response> {
  const headers: Record<string, string> = {
    authorization: `Bearer ${key}`,
    "content-type": "application/json",
  };
  if (session) headers["session-id"] = session;
  return workerFetch("/v1/responses", { method: "POST", headers, body: JSON.stringify(body) });
}

/** GET /v1/responses/{id} as JSON. */
export async function getResponse(id: string, key = KEY_A): Promise<Record<string, unknown>> {
  const res = await workerFetch(`/v1/responses/${id}`, { headers: { authorization: `Bearer ${key}` } });
  return (await res.json()) as Record<string, unknown>;
}

/** The events of an SSE body (`data:` lines as JSON). */
export function sseEvents(text: string): Array<Record<string, unknown>> {
  return text
    .split("\n")
    .filter((line) => line.startsWith("data: "))
    .map((line) => JSON.parse(line.slice(6)) as Record<string, unknown>);
}

/** The simulator's recorded /v1/moderations calls whose body contains `marker`. */
export async function moderationCalls(
  simulatorUrl: string,
  marker: string,
): Promise<Array<{ seq: number; at: number; input: string[]; aborted: boolean; status: number | null }>> {
  const res = await fetch(`${simulatorUrl}/_sim/requests?contains=${encodeURIComponent(marker)}`);
  const body = (await res.json()) as {
    data: Array<{
      seq: number;
      at: number;
      transport: string;
      body: { input?: unknown };
      aborted: boolean;
      status: number | null;
    }>;
  };
  return body.data
    .filter((r) => r.transport === "moderations")
    .map((r) => ({
      seq: r.seq,
      at: r.at,
      input: Array.isArray(r.body.input) ? (r.body.input as string[]) : [String(r.body.input)],
      aborted: r.aborted,
      status: r.status,
    }));
}
