/**
 * `npm start`: Deltagate on http://127.0.0.1:8787 (PORT overrides) with the embedded reference
 * simulator as its upstream on 127.0.0.1:8788 (SIM_PORT overrides). Setting UPSTREAM_BASE_URL
 * (and UPSTREAM_API_KEY) switches to a real model server instead; no account or key is needed
 * otherwise. Ctrl-C stops both.
 */
import { LOCAL_DEV_KEY, startLocalStack } from "./local-stack.ts";

const stack = await startLocalStack({
  port: Number(process.env.PORT ?? 8787),
  simulatorPort: Number(process.env.SIM_PORT ?? 8788),
  upstreamBaseUrl: process.env.UPSTREAM_BASE_URL,
  upstreamApiKey: process.env.UPSTREAM_API_KEY,
  apiKeys: process.env.DELTAGATE_API_KEYS,
  vars: process.env.MODELS ? { MODELS: process.env.MODELS } : {},
  verbose: true,
  persistTo: ".wrangler/state",
});
const upstream = stack.simulator
  ? `${stack.simulator.url}/v1 (reference simulator, not a model)`
  : process.env.UPSTREAM_BASE_URL;
console.log(
  `\nDeltagate is up: ${stack.baseUrl}  (WebSocket: ${stack.baseUrl.replace("http", "ws")}/responses)`,
);
console.log(`Upstream: ${upstream}`);
console.log(`API key: ${process.env.DELTAGATE_API_KEYS ? "(from DELTAGATE_API_KEYS)" : LOCAL_DEV_KEY}`);
console.log("Try it: npm run demo\n");

const shutdown = async () => {
  await stack.stop();
  process.exit(0);
};
process.on("SIGINT", shutdown);
process.on("SIGTERM", shutdown);
