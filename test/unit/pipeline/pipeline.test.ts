/**
 * The stage order of a turn's pipeline (src/pipeline/pipeline.ts), pinned by behaviour: with the
 * session's services replaced by recording fakes, `open()` runs through context window, usage,
 * safety and timing (which adds the request's `onConnected`) to the route chain, outermost first;
 * an upstream error comes back through safety, usage and context window unredacted and leaves
 * redacted (the redaction stage is outermost).
 */
import { describe, expect, it } from "vitest";
import type { CompactionKeys } from "../../../src/compaction/compaction-token.ts";
import type { ContextWindow } from "../../../src/context/context-window.ts";
import type { TurnContext } from "../../../src/context/counted-context.ts";
import { createTurnPipeline } from "../../../src/pipeline/pipeline.ts";
import { TurnTimer } from "../../../src/pipeline/turn-timer.ts";
import { createRequest } from "../../../src/protocol/create-request.ts";
import type { SessionSafety } from "../../../src/safety/session-safety.ts";
import { SecretRedactor } from "../../../src/secrets/redactor.ts";
import { decorateUpstream } from "../../../src/upstream/decorate.ts";
import { type Upstream, UpstreamError, type UpstreamRequest } from "../../../src/upstream/upstream.ts";

const SECRET = "route-secret-0123456789";

describe("createTurnPipeline", () => {
  it("wraps the route chain in timing, safety, usage, context window, then redaction (outermost)", async () => {
    const log: string[] = [];
    const timed = (request: UpstreamRequest) => (request.onConnected ? " (timed)" : "");
    /** A stand-in for a service's decorator, logging its wrap, its open and the errors it sees. */
    const recording =
      (name: string) =>
      (inner: Upstream): Upstream => {
        log.push(`wrap ${name}`);
        return decorateUpstream(inner, {
          open: async (request, signal) => {
            log.push(`open ${name}${timed(request)}`);
            try {
              return await inner.open(request, signal);
            } catch (cause) {
              log.push(`error at ${name}: ${(cause as Error).message}`);
              throw cause;
            }
          },
        });
      };
    const window = {
      fit: async (inner: Upstream) => recording("context-window")(inner),
      withUsage: (inner: Upstream) => recording("usage")(inner),
    } as unknown as ContextWindow;
    const safety = { wrap: (inner: Upstream) => recording("safety")(inner) } as unknown as SessionSafety;
    const pipeline = createTurnPipeline({
      routeChain: () => ({
        open: async (request) => {
          log.push(`open route chain${timed(request)}`);
          throw new UpstreamError(502, "upstream_error", `The route failed (key ${SECRET}).`);
        },
      }),
      window,
      safety,
      // Compaction passes a turn without compaction items, trigger or context_management through
      // untouched (src/pipeline/compaction-stage.ts), so it adds nothing to the log here.
      compaction: {
        keys: Promise.resolve({ secrets: [] } as unknown as CompactionKeys),
        tenant: () => "t",
        modeFor: () => "deltagate",
      },
      redactor: new SecretRedactor([SECRET]),
    });
    const upstream = await pipeline.upstreamFor({
      responseId: "resp_1",
      request: createRequest.parse({ model: "m", input: "hi" }),
      context: { history: { items: [] }, input: [], all: { items: [] } } as unknown as TurnContext,
      timer: new TurnTimer(),
    });
    const request = { model: "m" } as UpstreamRequest;
    const error = await upstream.open(request, new AbortController().signal).catch((cause: unknown) => cause);
    const raw = `The route failed (key ${SECRET}).`;
    expect(log).toEqual([
      "wrap safety",
      "wrap usage",
      "wrap context-window",
      "open context-window",
      "open usage",
      "open safety",
      "open route chain (timed)",
      `error at safety: ${raw}`,
      `error at usage: ${raw}`,
      `error at context-window: ${raw}`,
    ]);
    expect(error).toBeInstanceOf(UpstreamError);
    expect((error as UpstreamError).message).toBe("The route failed (key [redacted]).");
  });
});
