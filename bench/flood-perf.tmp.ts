import { writeFileSync } from "node:fs";
import WebSocket from "ws";
import { LOCAL_DEV_KEY, startLocalStack } from "../scripts/local-stack.ts";

const stack = await startLocalStack({
  port: 0,
  simulatorPort: 0,
  verbose: false,
  snapshot: true,
  vars: { TURN_LOG: "0" },
});
const wsUrl = `${stack.origin.replace("http", "ws")}/v1/responses`;
try {
  const f = new WebSocket(wsUrl, {
    headers: { authorization: `Bearer ${LOCAL_DEV_KEY}`, "session-id": `flooder-${Date.now()}` },
  });
  await new Promise((r) => f.once("open", r));
  let got = 0;
  f.on("message", () => got++);
  writeFileSync("/tmp/fx/ready", "1");
  await new Promise((r) => setTimeout(r, 2500));
  const frame = JSON.stringify({
    type: "response.create",
    model: "deltagate-sim",
    input: "x [sim:tokens=1]",
    store: false,
  });
  const t0 = performance.now();
  for (let i = 0; i < 10000; i++) f.send(frame);
  while (got < 10000 * 0.99) await new Promise((r) => setTimeout(r, 50));
  console.log("flood answered in", (performance.now() - t0).toFixed(0), "ms");
  await new Promise((r) => setTimeout(r, 1000));
  f.close();
} finally {
  await stack.stop();
}
