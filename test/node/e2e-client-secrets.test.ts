/**
 * Client secrets end to end against `wrangler dev` (the stack `npm start` runs, with its
 * development minting route `POST /demo/client_secret`): a real handshake, checked by the `ws`
 * client, which — like Chromium — fails a handshake whose 101 does not echo one of the offered
 * protocols. The secret goes in the subprotocol offer as OpenAI's Realtime browser form
 * (`["responses", "openai-insecure-api-key.<secret>"]`), in `?client_secret=`, and as the `apiKey`
 * of the `openai` SDK's `ResponsesWS` (its `Authorization` header, as a native app would).
 */
import OpenAI from "openai";
import { ResponsesWS } from "openai/resources/responses/ws";
import { describe, expect, it } from "vitest";
import WebSocket from "ws";
import { LOCAL_DEV_KEY } from "../../scripts/local-stack.ts";
import { useSharedStack } from "../support/e2e-stack.ts";

const e2e = useSharedStack();
const MODEL = "deltagate-sim";

interface Minted {
  value: string;
  expires_at: number;
  session: { id: string };
}

async function demoSecret(body: unknown = {}): Promise<Minted> {
  const res = await fetch(`${e2e.stack.origin}/demo/client_secret`, {
    method: "POST",
    // What the demo page sends: its own origin, a JSON body (the route takes nothing else).
    headers: { origin: e2e.stack.origin, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.json()) as Minted;
}

/** Opens a `ws` socket; resolves once open, or with the refused handshake's status and body. */
function open(
  url: string,
  protocols: string[] = [],
): Promise<{ ws: WebSocket } | { status: number; body: string } | { error: string }> {
  return new Promise((resolve) => {
    const ws = new WebSocket(url, protocols);
    ws.once("open", () => resolve({ ws }));
    ws.once("unexpected-response", (_req, res) => {
      let body = "";
      res.on("data", (chunk: Buffer) => {
        body += chunk.toString();
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
    });
    ws.once("error", (error) => resolve({ error: error.message }));
  });
}

/** Runs one turn on an open socket; returns the terminal event's type. */
function turn(ws: WebSocket, input: string): Promise<string> {
  return new Promise((resolve) => {
    const onMessage = (data: WebSocket.RawData) => {
      const event = JSON.parse(data.toString()) as { type: string };
      if (["response.completed", "response.failed", "error"].includes(event.type)) {
        ws.off("message", onMessage);
        resolve(event.type);
      }
    };
    ws.on("message", onMessage);
    ws.send(JSON.stringify({ type: "response.create", model: MODEL, input }));
  });
}

describe("client secrets against wrangler dev", () => {
  const wsUrl = () => `${e2e.stack.origin.replace(/^http/, "ws")}/v1/responses`;

  it("the subprotocol form: `ws` accepts the echoed protocol and the socket runs turns", async () => {
    const { value } = await demoSecret();
    const opened = await open(wsUrl(), ["responses", `openai-insecure-api-key.${value}`]);
    if (!("ws" in opened)) throw new Error(`handshake refused: ${JSON.stringify(opened)}`);
    expect(opened.ws.protocol).toBe("responses");
    expect(await turn(opened.ws, "Say hello")).toBe("response.completed");
    expect(await turn(opened.ws, "Again")).toBe("response.completed");
    opened.ws.close();
  });

  it("the query form, and a reconnect with the same secret reaches the same session", async () => {
    const { value } = await demoSecret();
    for (let i = 0; i < 2; i++) {
      const opened = await open(`${wsUrl()}?client_secret=${encodeURIComponent(value)}`);
      if (!("ws" in opened)) throw new Error(`handshake refused: ${JSON.stringify(opened)}`);
      expect(await turn(opened.ws, `turn ${i}`)).toBe("response.completed");
      opened.ws.close();
    }
  });

  it("refuses, before the upgrade and with JSON, an offer of only the secret and a tenant key in the offer", async () => {
    const { value } = await demoSecret();
    const only = await open(wsUrl(), [`openai-insecure-api-key.${value}`]);
    expect(only).toMatchObject({ status: 400 });
    expect(JSON.parse((only as { body: string }).body).error.code).toBe("websocket_protocol_required");
    const key = await open(wsUrl(), ["responses", `openai-insecure-api-key.${LOCAL_DEV_KEY}`]);
    expect(key).toMatchObject({ status: 401 });
    const body = (key as { body: string }).body;
    expect(JSON.parse(body).error.code).toBe("api_key_not_allowed_here");
    expect(body).not.toContain(LOCAL_DEV_KEY);
    const forged = await open(wsUrl(), ["responses", `openai-insecure-api-key.${value.slice(0, -4)}AAAA`]);
    expect(forged).toMatchObject({ status: 401 });
    expect(JSON.parse((forged as { body: string }).body).error.code).toBe("client_secret_invalid");
  });

  it("the openai SDK: a client secret as apiKey works for ResponsesWS and HTTP, and cannot mint", async () => {
    const { value, session } = await demoSecret({ session: { models: [MODEL] } });
    const client = new OpenAI({ apiKey: value, baseURL: e2e.stack.baseUrl, maxRetries: 0 });
    const ws = new ResponsesWS(client);
    const done = new Promise<string>((resolve, reject) => {
      ws.on("error", (error) => reject(error));
      ws.on("event", (event) => {
        if (event.type === "response.completed") resolve(event.response.id);
      });
    });
    ws.send({ type: "response.create", model: MODEL, input: "Say hello" });
    const id = await done;
    ws.close();
    const read = await client.responses.retrieve(id);
    expect(read.status).toBe("completed");
    const chained = await client.responses.create({ model: MODEL, input: "more", previous_response_id: id });
    expect(chained.status).toBe("completed");
    await expect(client.responses.create({ model: "other-model", input: "x" })).rejects.toMatchObject({
      status: 403,
      code: "client_secret_model_not_allowed",
    });
    const mint = await fetch(`${e2e.stack.baseUrl}/client_secrets`, {
      method: "POST",
      headers: { authorization: `Bearer ${value}` },
    });
    expect(mint.status).toBe(403);
    expect(session.id).toMatch(/^sess_/);
  });
});
