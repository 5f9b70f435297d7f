/**
 * Hostile suite, tenant crossing (issue #10 item 4): on every route and transport, another
 * tenant's real response id is answered exactly as an unknown id of the same format — same
 * status, same body once the id text is replaced — so a tenant cannot tell that an id exists.
 * Routes: GET, GET ?stream=true (resume), DELETE, input_items, cancel, and `previous_response_id`
 * over HTTP (JSON and SSE, `/v1/responses/compact`, `/v1/responses/input_tokens`);
 * `previous_response_id` and `deltagate.response.resume` over WebSocket.
 * Unknown ids: one in the caller's own session Durable Object, one in the other tenant's, one whose
 * owner is no Durable Object at all.
 */
import { describe, expect, it } from "vitest";
import { testId } from "../../support/test-id.ts";
import { connect, KEY_A, KEY_B, uniqueSession, workerFetch } from "../../support/ws-client.ts";

const MODEL = "deltagate-sim";
const asB = { authorization: `Bearer ${KEY_B}`, "content-type": "application/json" };

/** `id` with its 22-char random part replaced: same owner, same format, never handed out. */
function sibling(id: string): string {
  const random = btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(16))))
    .replaceAll("+", "-")
    .replaceAll("/", "_")
    .replace(/=+$/, "");
  return id.slice(0, id.length - 22) + random;
}

/** A well-formed id whose owner part names no Durable Object of this namespace. */
function ownerless(id: string): string {
  return `resp_${"A".repeat(43)}${id.slice(-22)}`;
}

async function create(key: string, input: string): Promise<string> {
  const res = await workerFetch("/v1/responses", {
    method: "POST",
    headers: {
      authorization: `Bearer ${key}`,
      "content-type": "application/json",
      "session-id": uniqueSession("crossing"),
    },
    body: JSON.stringify({ model: MODEL, input }),
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { id: string }).id;
}

/** A client-visible answer with the id text replaced, for comparison. */
type Answer = { status: number; body: string };

function masked(answer: Answer, id: string): Answer {
  return { status: answer.status, body: answer.body.replaceAll(id, "<id>") };
}

type Probe = (id: string) => Promise<Answer>;

const http =
  (method: string, path: (id: string) => string, body?: (id: string) => unknown): Probe =>
  async (id) => {
    const res = await workerFetch(path(id), {
      method,
      headers: asB,
      ...(body ? { body: JSON.stringify(body(id)) } : {}),
    });
    return { status: res.status, body: await res.text() };
  };

/** One WebSocket frame of tenant B's socket, answered with one `error` event. */
const overWebSocket =
  (frame: (id: string) => Record<string, unknown>): Probe =>
  async (id) => {
    const socket = await connect({ key: KEY_B, session: uniqueSession("crossing-ws") });
    socket.send(frame(id));
    const [error] = await socket.turn(0);
    socket.close();
    return { status: Number(error?.status), body: JSON.stringify(error) };
  };

const PROBES: Record<string, Probe> = {
  "GET /v1/responses/{id}": http("GET", (id) => `/v1/responses/${id}`),
  "GET /v1/responses/{id}?stream=true&starting_after=0": http(
    "GET",
    (id) => `/v1/responses/${id}?stream=true&starting_after=0`,
  ),
  "DELETE /v1/responses/{id}": http("DELETE", (id) => `/v1/responses/${id}`),
  "GET /v1/responses/{id}/input_items": http("GET", (id) => `/v1/responses/${id}/input_items`),
  "POST /v1/responses/{id}/cancel": http("POST", (id) => `/v1/responses/${id}/cancel`),
  "POST /v1/responses previous_response_id": http(
    "POST",
    () => "/v1/responses",
    (id) => ({ model: MODEL, input: "x", previous_response_id: id }),
  ),
  "POST /v1/responses previous_response_id, stream": http(
    "POST",
    () => "/v1/responses",
    (id) => ({ model: MODEL, input: "x", previous_response_id: id, stream: true }),
  ),
  "POST /v1/responses/compact previous_response_id": http(
    "POST",
    () => "/v1/responses/compact",
    (id) => ({ model: MODEL, previous_response_id: id }),
  ),
  "POST /v1/responses/input_tokens previous_response_id": http(
    "POST",
    () => "/v1/responses/input_tokens",
    (id) => ({ model: MODEL, input: "x", previous_response_id: id }),
  ),
  "WebSocket response.create previous_response_id": overWebSocket((id) => ({
    type: "response.create",
    model: MODEL,
    input: "x",
    previous_response_id: id,
  })),
  "WebSocket deltagate.response.resume": overWebSocket((id) => ({
    type: "deltagate.response.resume",
    response_id: id,
    starting_after: -1,
  })),
};

describe("hostile: another tenant's response id", () => {
  it.each(Object.keys(PROBES))("%s: answered exactly as an unknown id", async (route) => {
    const probe = PROBES[route]!;
    const foreign = await create(KEY_A, `tenant A's own ${testId()}`);
    const own = await create(KEY_B, "tenant B's own");
    const unknown = [sibling(own), sibling(foreign), ownerless(foreign)];
    const answer = masked(await probe(foreign), foreign);
    expect(answer.status).toBeGreaterThanOrEqual(400);
    expect(answer.status).toBeLessThan(500);
    for (const id of unknown) expect(masked(await probe(id), id), `unknown ${id}`).toEqual(answer);
    // And nothing happened to tenant A's response.
    const still = await workerFetch(`/v1/responses/${foreign}`, {
      headers: { authorization: `Bearer ${KEY_A}` },
    });
    expect(still.status).toBe(200);
    expect(((await still.json()) as { status: string }).status).toBe("completed");
  });
});
