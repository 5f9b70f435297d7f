/**
 * The flooding client of `npm run bench:tenancy`, in a process of its own so that its send loop
 * and the replies it receives cost the measuring process nothing (on one Node thread a loop of
 * 10,000 `send`s would stall the quiet session's own timers, and charge that to Deltagate).
 * Usage: node bench/tenancy-flooder.ts WS_URL KEY SESSION FRAMES [SHAPE]
 * Opens one socket, prints "open", waits for "go" on stdin, sends FRAMES tiny frames of SHAPE at
 * once, then prints one JSON line, once every frame is answered: the replies by event type/code and
 * how the socket ended (null: still open when the flooder closed it).
 * Shapes (issue #23: the flood screen must not depend on them): `default` — default-lane
 * `response.create`s, `type` first (as every SDK writes them); `stream_id` — creates on a named
 * lane; `reordered` — creates whose `type` is their last member; `unknown` — an event type no
 * server knows.
 */
import { createInterface } from "node:readline";
import WebSocket from "ws";

const [url, key, session, framesArg, shape = "default"] = process.argv.slice(2);
if (!url || !key || !session || !framesArg)
  throw new Error("usage: tenancy-flooder.ts WS_URL KEY SESSION FRAMES [SHAPE]");
const frames = Number(framesArg);
const create = { model: "deltagate-sim", input: "x [sim:tokens=1]", store: false };
const SHAPES: Record<string, unknown> = {
  default: { type: "response.create", ...create },
  stream_id: { type: "response.create", ...create, stream_id: "flood" },
  reordered: { ...create, type: "response.create" },
  unknown: { type: "flood.unknown_event", n: 1 },
};
if (!(shape in SHAPES)) throw new Error(`unknown shape ${shape}: one of ${Object.keys(SHAPES).join(", ")}`);
const frame = JSON.stringify(SHAPES[shape]);

const replies: Record<string, number> = {};
let closed: { code: number; reason: string } | null = null;
const ws = new WebSocket(url, { headers: { authorization: `Bearer ${key}`, "session-id": session } });
ws.on("message", (data) => {
  const event = JSON.parse(String(data)) as { type: string; error?: { code?: string } };
  const label = event.type === "error" ? `error:${event.error?.code ?? "?"}` : event.type;
  replies[label] = (replies[label] ?? 0) + 1;
});
ws.on("close", (code, reason) => {
  closed = { code, reason: String(reason) };
});
await new Promise<void>((resolve, reject) => {
  ws.once("open", () => resolve());
  ws.once("error", reject);
});
process.stdout.write("open\n");
const lines = createInterface({ input: process.stdin });
for await (const line of lines) {
  if (line.trim() !== "go") continue;
  for (let i = 0; i < frames; i++) ws.send(frame);
  break;
}
lines.close();
// Done once every frame has its last reply (an `error` event, or a create's terminal event), the
// server closed the socket, or nothing came for 2 s (a frame left unanswered: the counts show it).
const TERMINAL = ["response.completed", "response.failed", "response.incomplete"];
const answered = () =>
  Object.entries(replies)
    .filter(([label]) => label.startsWith("error:") || TERMINAL.includes(label))
    .reduce((sum, [, n]) => sum + n, 0);
let count = -1;
let quietSince = performance.now();
while (closed === null && answered() < frames && performance.now() - quietSince < 2_000) {
  await new Promise((resolve) => setTimeout(resolve, 20));
  const total = Object.values(replies).reduce((a, b) => a + b, 0);
  if (total !== count) {
    count = total;
    quietSince = performance.now();
  }
}
// How the socket ended is read before closing it ourselves; the close handshake then delivers any
// reply the server sent before it (a frame answered twice still shows in the counts).
const ended = closed;
if (ended === null) {
  const gone = new Promise((resolve) => ws.once("close", resolve));
  ws.close();
  await gone;
}
process.stdout.write(`${JSON.stringify({ replies, closed: ended })}\n`);
process.exit(0);
