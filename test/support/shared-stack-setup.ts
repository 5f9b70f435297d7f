/**
 * Vitest globalSetup for the `node` project: the one `npm start` stack (simulator + `wrangler dev`
 * on a frozen snapshot, default settings) that the end-to-end files without settings of their own
 * share (`useSharedStack` in e2e-stack.ts), instead of each starting one: a stack's start is
 * CPU-bound (bundling, workerd compiling the Worker) and was most of the `node` project's time
 * (docs/testing.md "How long it takes").
 * The stack lives in Vitest's main process; test files run in pool workers, so they reach it
 * through a small broker on loopback whose URL is provided as `sharedStackBroker`:
 * - `GET /stack` starts the stack on the first call (a run of files that do not need it starts
 *   none) and answers every call with where it is (`SharedStackInfo`), or with the reason it did
 *   not start (`{error}`), the same reason for every file;
 * - `GET /output` answers the tail of wrangler's output, for a test's diagnostics.
 * Invariant: the stack is stopped — wrangler's whole process group and the simulator
 * (`LocalStack.stop`) — when the project's run ends, and by `startLocalStack`'s `exit` hook if the
 * process ends first; nothing here restarts it.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import type { TestProject } from "vitest/node";
import { type LocalStack, startLocalStack } from "../../scripts/local-stack.ts";

declare module "vitest" {
  export interface ProvidedContext {
    sharedStackBroker: string;
  }
}

/** What `GET /stack` answers once the shared stack is healthy. */
export interface SharedStackInfo {
  /** `http://127.0.0.1:PORT`: the Worker's origin. */
  origin: string;
  /** `http://127.0.0.1:PORT/v1`. */
  baseUrl: string;
  /** The simulator's origin (`/_sim/requests` is its recorder). */
  simulatorUrl: string;
  /** Its Durable Object state directory (where its local secrets file is: scripts/local-secrets.ts). */
  stateDir: string;
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  let starting: Promise<LocalStack> | undefined;
  const start = (): Promise<LocalStack> => {
    starting ??= startLocalStack({ port: 0, simulatorPort: 0, verbose: false, snapshot: true });
    return starting;
  };
  const broker = createServer((req, res) => {
    const reply = (status: number, body: unknown) => {
      res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
    };
    if (req.url === "/stack") {
      start().then(
        (stack) => {
          const info: SharedStackInfo = {
            origin: stack.origin,
            baseUrl: stack.baseUrl,
            simulatorUrl: stack.simulator!.url,
            stateDir: stack.stateDir,
          };
          reply(200, info);
        },
        (error: unknown) => reply(200, { error: error instanceof Error ? error.message : String(error) }),
      );
      return;
    }
    if (req.url === "/output") {
      if (!starting) return reply(200, { output: "" });
      starting.then(
        (stack) => reply(200, { output: stack.output() }),
        () => reply(200, { output: "" }),
      );
      return;
    }
    reply(404, { error: `no route ${req.method} ${req.url}` });
  });
  await new Promise<void>((resolve, reject) => {
    broker.once("error", reject);
    broker.listen(0, "127.0.0.1", () => resolve());
  });
  project.provide("sharedStackBroker", `http://127.0.0.1:${(broker.address() as AddressInfo).port}`);
  return async () => {
    await new Promise<void>((resolve) => {
      broker.close(() => resolve());
      broker.closeAllConnections();
    });
    // A failed start already stopped what it had started.
    await starting?.then((stack) => stack.stop()).catch(() => {});
  };
}
