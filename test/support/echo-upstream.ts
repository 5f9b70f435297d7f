/**
 * A hostile upstream for the hostile-input suite (test/workers/hostile/): a real HTTP + WebSocket
 * server speaking the Responses (HTTP/SSE and WebSocket mode) and Chat Completions protocols that
 * echoes the caller's `Authorization` bearer key in every error position a real upstream can use.
 * Some servers do echo keys ("Incorrect API key provided: sk-…"); this one does it everywhere.
 *
 * The position is chosen by a marker `[echo:<position>]` anywhere in the request body (HTTP) or
 * the `response.create` frame (WebSocket):
 * - `status:NNN` — HTTP: a NNN answer with OpenAI's error envelope; WebSocket: an `error` frame
 *   with `status: NNN` before any event;
 * - `error_first` — a streamed `error` event (Chat Completions: an `{"error":…}` chunk) as the
 *   first event;
 * - `error_mid` — some output, then an `error` event / frame / chunk;
 * - `error_event` — Chat Completions only: some output, then an `event: error` SSE event;
 * - `failed` — some output, then `response.failed` whose `response.error` quotes the key;
 * - `incomplete` — some output, then `response.incomplete` whose `incomplete_details` quotes it;
 * - `output` — the model's output quotes it (issue #23): a message whose text deltas cut the key
 *   in three (after its first character, and in its middle) and a function call whose argument
 *   deltas cut it likewise, then the `*.done` events, the items and `response.completed`'s
 *   `output` with it whole (Chat Completions: content chunks and tool-call argument chunks cut
 *   the same way).
 * A WebSocket upgrade on `/status/NNN/v1/responses` is refused with NNN and the key in the body.
 * The key is put in `message`, `code` and `param` alike. Text output contains it only at `output`.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { WebSocketServer } from "ws";

/** A started echoing upstream. */
export interface EchoUpstream {
  /** Base URL without `/v1`. */
  url: string;
  close(): Promise<void>;
}

const MARKER = /\[echo:([a-z_]+(?::\d{3})?)\]/;

function positionOf(text: string): string {
  return MARKER.exec(text)?.[1] ?? "none";
}

function keyOf(req: IncomingMessage): string {
  const auth = req.headers.authorization ?? "";
  return auth.replace(/^Bearer\s+/i, "") || "(no key)";
}

function errorObject(key: string): Record<string, string> {
  return {
    type: "invalid_request_error",
    code: `invalid_api_key:${key}`,
    message: `Incorrect API key provided: ${key}. You sent "Authorization: Bearer ${key}".`,
    param: `key=${key}`,
  };
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

/** `key` cut in three: after its first character and in its middle (deltas that split it). */
function keyPieces(key: string): [string, string, string] {
  const middle = Math.floor(key.length / 2);
  return [key.slice(0, 1), key.slice(1, middle), key.slice(middle)];
}

/** A completed response whose message text and function-call arguments quote `key`. */
function outputEvents(key: string): Array<Record<string, unknown>> {
  const id = `resp_echo_${Math.random().toString(36).slice(2)}`;
  const base = { id, object: "response", created_at: 1, model: "echo" };
  const [a, b, c] = keyPieces(key);
  const text = `The key is ${key}. Again:${key}`;
  const args = JSON.stringify({ token: key });
  const message = {
    id: "msg_echo",
    type: "message",
    role: "assistant",
    status: "completed",
    content: [{ type: "output_text", text, annotations: [] }],
  };
  const call = {
    id: "fc_echo",
    type: "function_call",
    status: "completed",
    call_id: "call_echo",
    name: "use_key",
    arguments: args,
  };
  const part = { item_id: "msg_echo", output_index: 0, content_index: 0 };
  const argsAt = args.indexOf(key);
  return [
    { type: "response.created", response: { ...base, status: "in_progress", output: [] } },
    {
      type: "response.output_item.added",
      output_index: 0,
      item: { ...message, status: "in_progress", content: [] },
    },
    {
      type: "response.content_part.added",
      ...part,
      part: { type: "output_text", text: "", annotations: [] },
    },
    { type: "response.output_text.delta", ...part, delta: `The key is ${a}` },
    { type: "response.output_text.delta", ...part, delta: b },
    { type: "response.output_text.delta", ...part, delta: `${c}. Again:` },
    { type: "response.output_text.delta", ...part, delta: key },
    { type: "response.output_text.done", ...part, text },
    { type: "response.content_part.done", ...part, part: message.content[0] },
    { type: "response.output_item.done", output_index: 0, item: message },
    {
      type: "response.output_item.added",
      output_index: 1,
      item: { ...call, status: "in_progress", arguments: "" },
    },
    {
      type: "response.function_call_arguments.delta",
      item_id: "fc_echo",
      output_index: 1,
      delta: `${args.slice(0, argsAt)}${a}`,
    },
    { type: "response.function_call_arguments.delta", item_id: "fc_echo", output_index: 1, delta: b },
    {
      type: "response.function_call_arguments.delta",
      item_id: "fc_echo",
      output_index: 1,
      delta: `${c}${args.slice(argsAt + key.length)}`,
    },
    { type: "response.function_call_arguments.done", item_id: "fc_echo", output_index: 1, arguments: args },
    { type: "response.output_item.done", output_index: 1, item: call },
    {
      type: "response.completed",
      response: {
        ...base,
        status: "completed",
        output: [message, call],
        usage: { input_tokens: 1, output_tokens: 1, total_tokens: 2 },
      },
    },
  ];
}

/** Responses stream events of a response cut short by `position`, ending with its end event. */
function responsesEvents(position: string, key: string, webSocket: boolean): Array<Record<string, unknown>> {
  if (position === "output")
    return outputEvents(key).map((event, sequence_number) => ({ ...event, sequence_number }));
  const id = `resp_echo_${Math.random().toString(36).slice(2)}`;
  const base = { id, object: "response", created_at: 1, model: "echo", output: [] as unknown[] };
  const message = { id: "msg_echo", type: "message", role: "assistant", status: "in_progress", content: [] };
  const text = "partial output ";
  const done = {
    ...message,
    status: "completed",
    content: [{ type: "output_text", text, annotations: [] }],
  };
  const output: Array<Record<string, unknown>> = [
    { type: "response.created", response: { ...base, status: "in_progress" } },
    { type: "response.in_progress", response: { ...base, status: "in_progress" } },
    { type: "response.output_item.added", output_index: 0, item: message },
    {
      type: "response.content_part.added",
      item_id: "msg_echo",
      output_index: 0,
      content_index: 0,
      part: { type: "output_text", text: "", annotations: [] },
    },
    {
      type: "response.output_text.delta",
      item_id: "msg_echo",
      output_index: 0,
      content_index: 0,
      delta: text,
    },
  ];
  const finish: Array<Record<string, unknown>> = [
    { type: "response.output_text.done", item_id: "msg_echo", output_index: 0, content_index: 0, text },
    { type: "response.output_item.done", output_index: 0, item: done },
  ];
  const error = errorObject(key);
  let events: Array<Record<string, unknown>>;
  switch (position) {
    case "error_first":
      events = [webSocket ? { type: "error", status: 500, error } : { ...error, type: "error" }];
      break;
    case "error_mid":
      events = [...output, webSocket ? { type: "error", status: 500, error } : { ...error, type: "error" }];
      break;
    case "failed":
      events = [
        ...output,
        {
          type: "response.failed",
          response: { ...base, status: "failed", error: { code: error.code, message: error.message } },
        },
      ];
      break;
    case "incomplete":
      events = [
        ...output,
        ...finish,
        {
          type: "response.incomplete",
          response: {
            ...base,
            status: "incomplete",
            output: [done],
            incomplete_details: { reason: `max_output_tokens (account ${key})` },
            usage: { input_tokens: 1, output_tokens: 1, total_tokens: 2 },
          },
        },
      ];
      break;
    default:
      events = [
        ...output,
        ...finish,
        {
          type: "response.completed",
          response: {
            ...base,
            status: "completed",
            output: [done],
            usage: { input_tokens: 1, output_tokens: 1, total_tokens: 2 },
          },
        },
      ];
  }
  return events.map((event, sequence_number) => ({ ...event, sequence_number }));
}

function sendStatus(res: ServerResponse, status: number, key: string): void {
  const body = JSON.stringify({ error: errorObject(key) });
  res.writeHead(status, { "content-type": "application/json" });
  res.end(body);
}

function statusOf(position: string): number | null {
  const match = /^status:(\d{3})$/.exec(position);
  return match ? Number(match[1]) : null;
}

async function handleResponses(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const key = keyOf(req);
  const position = positionOf(await readBody(req));
  const status = statusOf(position);
  if (status !== null) return sendStatus(res, status, key);
  res.writeHead(200, { "content-type": "text/event-stream" });
  for (const event of responsesEvents(position, key, false)) {
    res.write(`event: ${String(event.type)}\ndata: ${JSON.stringify(event)}\n\n`);
  }
  res.end();
}

async function handleChat(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const key = keyOf(req);
  const position = positionOf(await readBody(req));
  const status = statusOf(position);
  if (status !== null) return sendStatus(res, status, key);
  res.writeHead(200, { "content-type": "text/event-stream" });
  const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
    `data: ${JSON.stringify({
      id: "chatcmpl-echo",
      object: "chat.completion.chunk",
      created: 1,
      model: "echo",
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
    })}\n\n`;
  const error = `data: ${JSON.stringify({ error: errorObject(key) })}\n\n`;
  if (position === "error_first") return void res.end(error);
  res.write(chunk({ role: "assistant", content: "" }));
  if (position === "output") {
    const [a, b, c] = keyPieces(key);
    for (const content of [`The key is ${a}`, b, `${c}. Again:`, key]) res.write(chunk({ content }));
    const args = JSON.stringify({ token: key });
    const at = args.indexOf(key);
    const pieces = [`${args.slice(0, at)}${a}`, b, `${c}${args.slice(at + key.length)}`];
    pieces.forEach((argumentsPiece, n) => {
      const call = { index: 0, function: { arguments: argumentsPiece } };
      res.write(
        chunk({
          tool_calls: [
            n === 0
              ? {
                  ...call,
                  id: "call_echo",
                  type: "function",
                  function: { name: "use_key", arguments: argumentsPiece },
                }
              : call,
          ],
        }),
      );
    });
    res.write(chunk({}, "tool_calls"));
    return void res.end("data: [DONE]\n\n");
  }
  res.write(chunk({ content: "partial output " }));
  if (position === "error_mid") return void res.end(error);
  if (position === "error_event") {
    return void res.end(`event: error\ndata: ${JSON.stringify({ error: errorObject(key) })}\n\n`);
  }
  res.write(chunk({}, "stop"));
  res.end("data: [DONE]\n\n");
}

/** Starts the echoing upstream on a free loopback port. */
export async function startEchoUpstream(): Promise<EchoUpstream> {
  const server = createServer((req, res) => {
    const path = (req.url ?? "/").split("?")[0];
    const run =
      req.method === "POST" && path === "/v1/responses"
        ? handleResponses(req, res)
        : req.method === "POST" && path === "/v1/chat/completions"
          ? handleChat(req, res)
          : Promise.resolve(sendStatus(res, 404, keyOf(req)));
    run.catch(() => res.destroy());
  });
  const wss = new WebSocketServer({ noServer: true });
  server.on("upgrade", (req, socket, head) => {
    const key = keyOf(req);
    const refused = /^\/status\/(\d{3})\/v1\/responses/.exec(req.url ?? "");
    if (refused) {
      const body = JSON.stringify({ error: errorObject(key) });
      socket.end(
        `HTTP/1.1 ${refused[1]} Refused\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      );
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      ws.on("message", (data) => {
        const position = positionOf(String(data));
        const status = statusOf(position);
        if (status !== null) {
          ws.send(JSON.stringify({ type: "error", status, error: errorObject(key) }));
          return;
        }
        for (const event of responsesEvents(position, key, true)) ws.send(JSON.stringify(event));
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: async () => {
      for (const client of wss.clients) client.terminate();
      wss.close();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}
