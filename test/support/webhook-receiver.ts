/**
 * A webhook receiver for the workers tests (test/workers/webhooks.test.ts): a real HTTP server on
 * loopback that records every delivery attempt — its headers and its raw body, as a receiver must
 * keep them to verify a signature — and answers as the endpoint URL asks:
 * - `POST /hooks/NAME` answers 200;
 * - `?fail=N`: the first N attempts of NAME get 503 (the endpoint "down"), the next 200;
 * - `?down=1`: every attempt of NAME gets 503 until `POST /_ctl/up?name=NAME`, then 200;
 * - `?hold=1`: the first attempt of NAME gets no answer until `POST /_ctl/release?name=NAME`
 *   (a delivery in flight when the session restarts), the next 200.
 * `GET /_ctl/deliveries?name=NAME` lists NAME's attempts in order, with the status each got (null
 * while held).
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** One attempt, as the receiver got it. */
export interface ReceivedAttempt {
  headers: Record<string, string>;
  body: string;
  /** The status answered (null: held, not answered yet). */
  status: number | null;
}

/** A started receiver. */
export interface WebhookReceiver {
  /** Its origin, `http://127.0.0.1:PORT`. */
  url: string;
  close(): Promise<void>;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

/** Starts a receiver on 127.0.0.1 (a free port). */
export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const attempts = new Map<string, ReceivedAttempt[]>();
  const held = new Map<string, Array<() => void>>();
  const up = new Set<string>();
  const answer = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { "content-type": "application/json" });
    res.end(JSON.stringify(body));
  };
  const server = createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? "/", "http://receiver");
      const name = url.searchParams.get("name") ?? url.pathname.slice("/hooks/".length);
      if (req.method === "GET" && url.pathname === "/_ctl/deliveries") {
        answer(res, 200, { data: attempts.get(name) ?? [] });
        return;
      }
      if (req.method === "POST" && url.pathname === "/_ctl/up") {
        up.add(name);
        answer(res, 200, { up: true });
        return;
      }
      if (req.method === "POST" && url.pathname === "/_ctl/release") {
        for (const release of held.get(name) ?? []) release();
        held.delete(name);
        answer(res, 200, { released: true });
        return;
      }
      if (req.method !== "POST" || !url.pathname.startsWith("/hooks/")) {
        answer(res, 404, { error: "not found" });
        return;
      }
      const attempt: ReceivedAttempt = {
        headers: Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)])),
        body: await readBody(req),
        status: null,
      };
      const list = attempts.get(name) ?? [];
      list.push(attempt);
      attempts.set(name, list);
      const failing = Number(url.searchParams.get("fail") ?? 0);
      const down = url.searchParams.get("down") === "1" && !up.has(name);
      const status = down || list.length <= failing ? 503 : 200;
      if (url.searchParams.get("hold") === "1" && list.length === 1) {
        held.set(name, [
          ...(held.get(name) ?? []),
          () => {
            attempt.status = 200;
            answer(res, 200, { ok: true });
          },
        ]);
        return;
      }
      attempt.status = status;
      answer(res, status, status === 200 ? { ok: true } : { error: "down" });
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise((resolve) => {
        for (const releases of held.values()) for (const release of releases) release();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
