/**
 * Hostile suite, secrets (issue #10 item 1): an upstream that echoes its API key in every error
 * position (test/support/echo-upstream.ts) — an HTTP error before the first event, a streamed
 * `error` event first or mid-stream, `response.failed`, `response.incomplete`, a WebSocket `error`
 * frame, a refused WebSocket upgrade, Chat Completions error chunks and `event: error` — with keys
 * of every shape (plain alphanumeric, gsk_, xai-, Azure hex, AIza…, fw_, sk-proj-). For every
 * position, API, key shape and client transport (HTTP JSON, SSE, WebSocket), the key appears in no
 * byte the client receives, nor in the stored response (`GET /v1/responses/{id}`) or its replay
 * (`?stream=true`). An upstream 401/403 becomes 502 `upstream_auth_failed` without its text.
 * The same holds for a key quoted in model output, whole or cut across deltas.
 */
import { describe, expect, it } from "vitest";
import { ECHO_KEYS, type EchoShape } from "../../support/echo-keys.ts";
import { connect, KEY_A, uniqueSession, workerFetch } from "../../support/ws-client.ts";

const SHAPES = Object.keys(ECHO_KEYS) as EchoShape[];
const auth = { authorization: `Bearer ${KEY_A}`, "content-type": "application/json" };

/** What a client saw of one turn, and the ids of the responses it created. */
interface Seen {
  bytes: string[];
  ids: string[];
}

function idsIn(text: string): string[] {
  return [...new Set(text.match(/resp_[A-Za-z0-9_-]{65}/g) ?? [])];
}

async function overHttp(model: string, position: string, stream: boolean, session: string): Promise<Seen> {
  const res = await workerFetch("/v1/responses", {
    method: "POST",
    headers: { ...auth, "session-id": session },
    body: JSON.stringify({ model, input: `hello [echo:${position}]`, stream }),
  });
  const text = await res.text();
  return { bytes: [text], ids: idsIn(text) };
}

async function overWebSocket(model: string, position: string, session: string): Promise<Seen> {
  const socket = await connect({ session });
  const raw: string[] = [];
  socket.ws.addEventListener("message", (event) => raw.push(String(event.data)));
  socket.send({ type: "response.create", model, input: `hello [echo:${position}]` });
  await socket.turn(0);
  socket.close();
  const joined = raw.join("\n");
  return { bytes: raw, ids: idsIn(joined) };
}

/** Everything stored for `ids`: the Response objects and their replayed event streams. */
async function stored(ids: readonly string[]): Promise<string[]> {
  const out: string[] = [];
  for (const id of ids) {
    out.push(await (await workerFetch(`/v1/responses/${id}`, { headers: auth })).text());
    out.push(await (await workerFetch(`/v1/responses/${id}?stream=true`, { headers: auth })).text());
  }
  return out;
}

/**
 * Runs `position` against the `api` routes of every key shape over every client transport and
 * checks that no key leaked. `expectStored` says whether the position yields a stored response.
 */
async function expectNoKey(api: string, position: string, expectStored: boolean): Promise<string[]> {
  const everything: string[] = [];
  for (const shape of SHAPES) {
    const key = ECHO_KEYS[shape];
    const model = `echo-${api}-${shape}`;
    const session = uniqueSession(`echo-${api}-${shape}`);
    const turns = [
      await overHttp(model, position, false, session),
      await overHttp(model, position, true, session),
      await overWebSocket(model, position, session),
    ];
    const ids = turns.flatMap((turn) => turn.ids);
    if (expectStored) expect(ids.length, `${model} ${position}: stored responses`).toBeGreaterThanOrEqual(2);
    const bytes = [...turns.flatMap((turn) => turn.bytes), ...(await stored(ids))];
    for (const text of bytes) {
      expect(text.includes(key), `${model} ${position} leaked its ${shape} key: ${text.slice(0, 300)}`).toBe(
        false,
      );
    }
    everything.push(...bytes);
  }
  return everything;
}

describe("hostile: an upstream echoing its key", () => {
  describe("Responses over HTTP", () => {
    it.each(["status:400", "status:500"])("HTTP error before the first event (%s)", async (position) => {
      const seen = await expectNoKey("http", position, false);
      expect(seen.join("")).toContain("[redacted]"); // the message was relayed, minus the key
    });

    it("streamed error event before the first event", async () => {
      expect((await expectNoKey("http", "error_first", false)).join("")).toContain("[redacted]");
    });

    it.each(["error_mid", "failed", "incomplete"])("%s after output (stored, replayed)", async (position) => {
      expect((await expectNoKey("http", position, true)).join("")).toContain("[redacted]");
    });

    it("a 401 is reported as 502 upstream_auth_failed without the upstream's text", async () => {
      const seen = await expectNoKey("http", "status:401", false);
      const body = JSON.parse(seen[0]!) as { error: { code: string; message: string } };
      expect(body.error).toMatchObject({
        code: "upstream_auth_failed",
        message: "The upstream rejected Deltagate's credentials.",
      });
      expect(seen.join("")).not.toContain("Incorrect API key");
    });
  });

  describe("Responses WebSocket mode", () => {
    it("error frame before the first event", async () => {
      expect((await expectNoKey("ws", "status:400", false)).join("")).toContain("[redacted]");
    });

    it.each(["error_mid", "failed", "incomplete"])("%s after output (stored, replayed)", async (position) => {
      await expectNoKey("ws", position, true);
    });

    it("a refused upgrade whose body echoes the key", async () => {
      expect((await expectNoKey("wsdeny", "none", false)).join("")).toContain("[redacted]");
    });
  });

  describe("Chat Completions", () => {
    it.each(["status:400", "error_first"])("%s before the first chunk", async (position) => {
      expect((await expectNoKey("chat", position, false)).join("")).toContain("[redacted]");
    });

    it.each(["error_mid", "error_event"])("%s after output (stored, replayed)", async (position) => {
      expect((await expectNoKey("chat", position, true)).join("")).toContain("[redacted]");
    });

    it("a 403 is reported as 502 upstream_auth_failed", async () => {
      const seen = await expectNoKey("chat", "status:403", false);
      expect(seen[0]).toContain("upstream_auth_failed");
    });
  });

  // Issue #23: a key quoted in model output — text deltas and function-call argument deltas that
  // cut it (after its first character and in its middle), the `*.done` events, the items,
  // `response.completed` — reached the client, the stored response and its replay.
  describe("model output quoting the key (text and arguments, cut across deltas)", () => {
    it.each(["http", "ws", "chat"])(
      "%s: redacted in every event, across deltas, stored and replayed",
      async (api) => {
        const seen = await expectNoKey(api, "output", true);
        for (const shape of SHAPES) {
          const key = ECHO_KEYS[shape];
          for (const text of seen) {
            const deltas = [...text.matchAll(/"delta":("(?:[^"\\]|\\.)*")/g)].map(
              (m) => JSON.parse(m[1]!) as string,
            );
            expect(deltas.join("").includes(key), `${api}: deltas rebuild the ${shape} key`).toBe(false);
          }
        }
        const joined = seen.join("");
        expect(joined).toContain("The key is [redacted]. Again:[redacted]");
        expect(joined).toContain(JSON.stringify(JSON.stringify({ token: "[redacted]" })).slice(1, -1));
      },
    );
  });

  it("model output that is not an error is relayed as is", async () => {
    const seen = await overHttp("echo-http-plain", "none", false, uniqueSession("echo-ok"));
    expect(JSON.parse(seen.bytes[0]!)).toMatchObject({
      status: "completed",
      output: [{ type: "message", content: [{ type: "output_text", text: "partial output " }] }],
    });
  });
});
