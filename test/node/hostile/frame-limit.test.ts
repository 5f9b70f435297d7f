/**
 * Hostile suite, WebSocket frame sizes against the real runtime (`wrangler dev`, i.e. workerd as
 * deployed; the `workers` tests' in-process sockets enforce no frame limit at all): a frame over
 * Deltagate's 24 MiB request limit but under the runtime's 32 MiB gets a 413 `request_too_large`
 * `error` event and the socket stays usable; a frame over 32 MiB is closed by the runtime with
 * 1009 "Message is too large" before Deltagate sees it
 * (https://developers.cloudflare.com/durable-objects/platform/limits/).
 */
import { describe, expect, it } from "vitest";
import WebSocket from "ws";
import { LOCAL_DEV_KEY } from "../../../scripts/local-stack.ts";
import { MAX_REQUEST_BYTES, MAX_WEBSOCKET_FRAME_BYTES } from "../../../src/protocol/size-limits.ts";
import { useSharedStack } from "../../support/e2e-stack.ts";

const e2e = useSharedStack();

/**
 * How long `ws` waits, once close frames were exchanged, for the peer to end the TCP connection
 * before it ends it itself and emits `close` (its `closeTimeout`, 30 s by default:
 * https://github.com/websockets/ws/blob/8.23.0/doc/ws.md#new-websocketaddress-protocols-options).
 * After the runtime's 1009 the connection stayed open until then; the code and reason `close`
 * reports are the ones of the close frame received, so a shorter wait changes nothing checked.
 */
const CLOSE_TIMEOUT_MS = 1_000;

/** A socket to Deltagate that records its frames and its close. */
async function open(): Promise<{ ws: WebSocket; frames: string[]; closed: Promise<[number, string]> }> {
  // `closeTimeout` is an option of ws 8.23 that @types/ws 8.18 does not declare.
  const options = { headers: { authorization: `Bearer ${LOCAL_DEV_KEY}` }, closeTimeout: CLOSE_TIMEOUT_MS };
  const ws = new WebSocket(`${e2e.stack.origin.replace("http", "ws")}/v1/responses`, options);
  const frames: string[] = [];
  ws.on("message", (data) => frames.push(String(data)));
  const closed = new Promise<[number, string]>((resolve) =>
    ws.on("close", (code, reason) => resolve([code, String(reason)])),
  );
  await new Promise((resolve, reject) => {
    ws.once("open", resolve);
    ws.once("error", reject);
  });
  return { ws, frames, closed };
}

function create(inputBytes: number): string {
  return JSON.stringify({ type: "response.create", model: "deltagate-sim", input: "y".repeat(inputBytes) });
}

async function until(check: () => boolean, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error("timed out");
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe("hostile: WebSocket frame sizes in workerd", () => {
  it("a frame between the request limit and the runtime's: 413 request_too_large, socket open", async () => {
    const { ws, frames } = await open();
    ws.send(create(MAX_REQUEST_BYTES + 1024));
    await until(() => frames.length === 1);
    expect(JSON.parse(frames[0]!)).toMatchObject({
      type: "error",
      status: 413,
      error: { code: "request_too_large" },
    });
    ws.send(
      JSON.stringify({ type: "response.create", model: "deltagate-sim", input: "still open [sim:tools=0]" }),
    );
    await until(() => frames.some((frame) => frame.includes('"response.completed"')));
    ws.close();
  });

  it("a frame over 32 MiB: the runtime closes the socket with 1009", async () => {
    const { ws, closed } = await open();
    ws.send(create(MAX_WEBSOCKET_FRAME_BYTES + 1024));
    expect(await closed).toEqual([1009, "Message is too large"]);
  });
});
