/**
 * Compression on the client link, end to end against `wrangler dev` (issue #8 item 5):
 * - a `ws` client that offers `permessage-deflate` gets it (workerd negotiates it for Workers
 *   whose compatibility date is 2023-08-15 or later: the `web_socket_compression` flag, on by
 *   default for Deltagate's 2026-11-01), runs a full tool turn over the compressed socket, and its
 *   uplink for the same frames is smaller than an uncompressed socket's;
 * - a zstd-compressed `POST /v1/responses` (as Codex sends) creates a response.
 */
import type { Socket } from "node:net";
import { zstdCompressSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import WebSocket from "ws";
import { LOCAL_DEV_KEY } from "../../scripts/local-stack.ts";
import { useSharedStack } from "../support/e2e-stack.ts";

const e2e = useSharedStack();

const tools = [
  {
    type: "function",
    name: "exec_command",
    description: "Runs a shell command in the workspace and returns its output. ".repeat(20),
    parameters: { type: "object", properties: { cmd: { type: "string" } }, required: ["cmd"] },
  },
];
const instructions = "You are a coding agent. Read files before editing them; run the tests. ".repeat(120);
const listing = Array.from(
  { length: 60 },
  (_, i) =>
    `-rw-r--r--  1 dev  staff  ${1000 + i * 37}  Nov  1 12:${String(i % 60).padStart(2, "0")} file-${i}.ts`,
).join("\n");

/** Opens a socket, runs a two-turn tool loop, and returns the negotiated extensions and bytes sent. */
async function toolTurn(perMessageDeflate: boolean): Promise<{ extensions: string; uplink: number }> {
  const url = `${e2e.stack.baseUrl.replace(/^http/, "ws")}/responses`;
  const ws = new WebSocket(url, { perMessageDeflate, headers: { authorization: `Bearer ${LOCAL_DEV_KEY}` } });
  await new Promise<void>((resolve, reject) => {
    ws.once("open", () => resolve());
    ws.once("error", reject);
  });
  const socket = (ws as unknown as { _socket: Socket })._socket;
  const before = socket.bytesWritten;
  const completed: Array<{ id: string; output: Array<Record<string, unknown>> }> = [];
  const done = (n: number) =>
    new Promise<void>((resolve, reject) => {
      const onMessage = (data: WebSocket.RawData) => {
        const event = JSON.parse(String(data)) as { type: string; response?: (typeof completed)[number] };
        if (event.type === "error") reject(new Error(String(data)));
        if (event.type === "response.completed" && event.response) {
          completed.push(event.response);
          if (completed.length === n) {
            ws.off("message", onMessage);
            resolve();
          }
        }
      };
      ws.on("message", onMessage);
    });
  const base = { type: "response.create", model: "deltagate-sim", instructions, tools };
  ws.send(JSON.stringify({ ...base, input: "List the files [sim:tools=1] [sim:tokens=8]" }));
  await done(1);
  const call = completed[0]?.output.find((item) => item.type === "function_call");
  expect(call).toBeDefined();
  ws.send(
    JSON.stringify({
      ...base,
      previous_response_id: completed[0]?.id,
      input: [{ type: "function_call_output", call_id: call?.call_id, output: listing }],
    }),
  );
  await done(2);
  const uplink = socket.bytesWritten - before;
  const extensions = ws.extensions;
  ws.close();
  return { extensions, uplink };
}

describe("compression on the client link (wrangler dev)", () => {
  it("negotiates permessage-deflate, runs a tool turn over it, and sends fewer bytes", async () => {
    const compressed = await toolTurn(true);
    expect(compressed.extensions).toContain("permessage-deflate");
    const plain = await toolTurn(false);
    expect(plain.extensions).toBe("");
    expect(compressed.uplink).toBeLessThan(plain.uplink / 2);
  });

  it("creates a response from a zstd-compressed HTTP body", async () => {
    const body = zstdCompressSync(
      Buffer.from(
        JSON.stringify({ model: "deltagate-sim", instructions, tools, input: "hi [sim:tokens=8]" }),
      ),
    );
    const res = await fetch(`${e2e.stack.baseUrl}/responses`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${LOCAL_DEV_KEY}`,
        "content-type": "application/json",
        "content-encoding": "zstd",
      },
      body,
    });
    expect(res.status, await res.clone().text()).toBe(200);
    expect(((await res.json()) as { status: string }).status).toBe("completed");
  });
});
