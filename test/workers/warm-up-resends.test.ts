/**
 * A full resend chained on a warm-up (issue #27 item 4): Codex opens every new socket (a
 * reconnect, `codex exec resume`) with a `generate: false` warm-up that names no
 * `previous_response_id` — its instructions message, with its tools — and chains its first turn
 * on it with the rest of the whole conversation as input. Deltagate matches the warm-up's input
 * followed by the turn's against the chain the session holds, exactly like an unchained resend:
 * same settings, the same visibility rule (a store:false chain of another socket only within the
 * grace window that socket asked for). The warm-up, which repeats the start of that chain, is not
 * pre-warmed upstream (it would take the place of the chain the upstream WebSocket holds), and the
 * turn goes upstream as a delta on the held chain. Its Response object still names the warm-up,
 * as the client sent. A warm-up with other settings, or a chain the caller may not continue, is
 * not matched: the turn goes as before.
 */
import { describe, expect, inject, it } from "vitest";
import { DEFAULT_STORE_FALSE_GRACE_MAX_MS } from "../../src/config/config.ts";
import { listed, SHELL_TOOL } from "../support/fixtures.ts";
import { testId } from "../support/test-id.ts";
import {
  connect,
  simulatorRequests,
  type TestSocket,
  uniqueSession,
  workerFetch,
} from "../support/ws-client.ts";

type Item = Record<string, unknown>;
interface Completed {
  id: string;
  previous_response_id: string | null;
  output: Item[];
}
interface Recorded {
  inputItemCount: number | null;
  contextItemCount: number | null;
  previousResponseId: string | null;
  body: { generate?: boolean; input: Item[] };
}

/** Codex's settings: the same on the warm-up and on every turn. */
const SETTINGS = { model: "sim-ws", tools: [SHELL_TOOL], prompt_cache_key: "thread-1" };
const GRACE = { "x-deltagate-store-false-grace": String(DEFAULT_STORE_FALSE_GRACE_MAX_MS) };

const message = (id: string, role: string, text: string): Item => ({
  type: "message",
  id,
  role,
  content: [{ type: "input_text", text }],
});

/** The client's next items after `output`: an output for each tool call, else a user message. */
function answer(output: Item[], id: string, text: string): Item[] {
  const calls = output.filter((item) => item.type === "function_call");
  if (calls.length === 0) return [message(id, "user", text)];
  return calls.map((call, n) => ({
    type: "function_call_output",
    id: `${id}_${n}`,
    call_id: call.call_id,
    output: text,
  }));
}

/** Sends one create on `ws` (its `n`-th response) and returns the completed response. */
async function create(ws: TestSocket, n: number, body: Record<string, unknown>): Promise<Completed> {
  ws.send({ type: "response.create", ...SETTINGS, ...body });
  const frames = await ws.turn(n);
  const last = frames.at(-1) as unknown as { type: string; response: Completed };
  expect(last.type, JSON.stringify(frames.at(-1))).toBe("response.completed");
  return last.response;
}

/**
 * A Codex socket: the warm-up (its input `warmUp`, `warmUpSettings` over Codex's), then one turn
 * chained on it with `input`.
 */
async function codexSocket(
  ws: TestSocket,
  store: boolean,
  warmUp: Item[],
  input: Item[],
  warmUpSettings: Record<string, unknown> = {},
): Promise<{ warmUp: Completed; turn: Completed }> {
  const first = await create(ws, 0, { store, generate: false, input: warmUp, ...warmUpSettings });
  expect(first.output).toEqual([]);
  const turn = await create(ws, 1, { store, previous_response_id: first.id, input });
  return { warmUp: first, turn };
}

/**
 * A conversation on one socket (a warm-up, a turn, a resend on a new socket chained on that
 * socket's warm-up): what the client sent and got, and what went upstream.
 */
async function reconnect(options: {
  store: boolean;
  grace: boolean;
  secondWarmUpSettings?: Record<string, unknown>;
}) {
  const marker = `warm-up-resend-${testId()}`;
  const session = uniqueSession("warm-up-resend");
  const headers = options.grace ? GRACE : {};
  const instructions = [message("msg_base", "developer", `${marker} You are a coding agent.`)];
  const firstInput = [message("msg_user_1", "user", `${marker} first`)];
  const one = await connect({ session, headers });
  const old = await codexSocket(one, options.store, instructions, firstInput);
  one.close();
  // The new socket: the same warm-up, then everything after it, and the new items.
  const next = answer(old.turn.output, "msg_user_2", `${marker} second`);
  const resend = [...firstInput, ...old.turn.output, ...next];
  const two = await connect({ session, headers });
  const now = await codexSocket(two, options.store, instructions, resend, options.secondWarmUpSettings);
  two.close();
  const upstream = (await simulatorRequests(inject("simulatorUrl"), marker)) as unknown as Recorded[];
  return { instructions, firstInput, old, next, resend, now, upstream };
}

describe("a full resend chained on an empty warm-up (Codex after a reconnect)", () => {
  it("continues the held chain: the warm-up stays local and the turn goes upstream as a delta", async () => {
    const run = await reconnect({ store: false, grace: true });
    const { upstream, now, old, next } = run;
    // Upstream: the first socket's warm-up and turn; the second warm-up repeats the chain's start
    // and is not sent; the resend is only its new items on top of the held chain.
    expect(upstream.map((r) => r.body.generate === false)).toEqual([true, false, false]);
    const [, turnOne, resend] = upstream;
    expect(resend?.inputItemCount).toBe(next.length);
    expect(resend?.previousResponseId).not.toBeNull();
    expect(resend?.contextItemCount).toBe(run.instructions.length + run.resend.length);
    expect(resend?.contextItemCount).toBe(
      (turnOne?.contextItemCount ?? 0) + old.turn.output.length + next.length,
    );
    // The client sees what it sent: the turn continues its warm-up.
    expect(now.turn.previous_response_id).toBe(now.warmUp.id);
    expect(now.warmUp.previous_response_id).toBeNull();
  });

  it("lists what the client sent as the turn's input_items (store:true; tool outputs with OpenAI's listed status)", async () => {
    const run = await reconnect({ store: true, grace: false });
    const { upstream, now, next } = run;
    expect(upstream.map((r) => r.body.generate === false)).toEqual([true, false, false]);
    expect(upstream[2]?.inputItemCount).toBe(next.length);
    expect(now.turn.previous_response_id).toBe(now.warmUp.id);
    const res = await workerFetch(`/v1/responses/${now.turn.id}/input_items?order=asc&limit=100`, {
      headers: { authorization: "Bearer dg-test-a" },
    });
    expect(res.status).toBe(200);
    const items = ((await res.json()) as { data: Item[] }).data;
    // What the client sent, with the `status` OpenAI lists on a tool output.
    expect(items).toEqual(listed([...run.instructions, ...run.resend]));
  });

  it("does not match a store:false chain of a closed socket without the grace window", async () => {
    const run = await reconnect({ store: false, grace: false });
    const { upstream, resend } = run;
    // The old chain is not visible: the warm-up is pre-warmed, the turn goes whole on top of it.
    expect(upstream.map((r) => r.body.generate === false)).toEqual([true, false, true, false]);
    expect(upstream[3]?.inputItemCount).toBe(resend.length);
    expect(run.now.turn.previous_response_id).toBe(run.now.warmUp.id);
  });

  it("does not match through a warm-up whose settings differ from the chain's", async () => {
    const run = await reconnect({ store: false, grace: true, secondWarmUpSettings: { temperature: 0.5 } });
    const { upstream, resend } = run;
    expect(upstream.map((r) => r.body.generate === false)).toEqual([true, false, true, false]);
    expect(upstream[3]?.inputItemCount).toBe(resend.length);
  });
});
