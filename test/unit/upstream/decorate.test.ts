/**
 * The one Upstream decorator helper (src/upstream/decorate.ts): a decorated upstream forwards
 * `contextWindow` (read live), `prewarm`, `preconnect` and `dispose` to its inner upstream without the
 * decorator writing them, and a request rewrite reaches `open` and `prewarm` alike.
 */
import { describe, expect, it } from "vitest";
import { decorateUpstream } from "../../../src/upstream/decorate.ts";
import type { Upstream, UpstreamRequest, UpstreamStream } from "../../../src/upstream/upstream.ts";

function recordingInner() {
  const calls: string[] = [];
  const inner = {
    contextWindow: 1_000 as number | undefined,
    open: async (request: UpstreamRequest): Promise<UpstreamStream> => {
      calls.push(`open ${request.model}`);
      return { first: { type: "response.created" }, rest: [] as never };
    },
    prewarm: (request: UpstreamRequest) => void calls.push(`prewarm ${request.model}`),
    preconnect: async () => void calls.push("preconnect"),
    dispose: () => void calls.push("dispose"),
  };
  return { calls, inner };
}

const request = { model: "m" } as UpstreamRequest;

describe("decorateUpstream", () => {
  it("forwards contextWindow (live), prewarm, preconnect and dispose; open is the decorator's", async () => {
    const { calls, inner } = recordingInner();
    const decorated = decorateUpstream(inner, {
      open: async (r) => {
        calls.push("decorator open");
        return inner.open(r);
      },
    });
    expect(decorated.contextWindow).toBe(1_000);
    inner.contextWindow = 2_000;
    expect(decorated.contextWindow).toBe(2_000);
    decorated.prewarm?.(request);
    await decorated.preconnect?.();
    await decorated.open(request, new AbortController().signal);
    decorated.dispose?.();
    expect(calls).toEqual(["prewarm m", "preconnect", "decorator open", "open m", "dispose"]);
  });

  it("applies a request rewrite to open and prewarm alike", async () => {
    const { calls, inner } = recordingInner();
    const decorated = decorateUpstream(inner, { request: (r) => ({ ...r, model: "upstream-model" }) });
    decorated.prewarm?.(request);
    await decorated.open(request, new AbortController().signal);
    expect(calls).toEqual(["prewarm upstream-model", "open upstream-model"]);
  });

  it("is safe over an inner upstream without the optional members", async () => {
    const inner: Upstream = {
      open: async () => ({ first: { type: "response.created" }, rest: [] as never }),
    };
    const decorated = decorateUpstream(inner, {});
    expect(decorated.contextWindow).toBeUndefined();
    expect(() => decorated.prewarm?.(request)).not.toThrow();
    await expect(decorated.preconnect?.()).resolves.toBeUndefined();
    expect(() => decorated.dispose?.()).not.toThrow();
  });
});
