/**
 * The stream step of a turn (src/engine/turn-stream.ts) against a scripted upstream: a cancel
 * ends the turn at once, without waiting for the upstream's next event (an upstream that would
 * never send one), and the upstream sees the abort; the cancelled outcome keeps the output sent so
 * far and the usage the stream counts; a failure of `open()` becomes a failed outcome with the
 * upstream's status for a non-streaming client; an unexpected failure goes to the session's log
 * (which names the response and redacts it), not to the client.
 */
import { describe, expect, it } from "vitest";
import type { TurnEmitter } from "../../../src/engine/turn-emitter.ts";
import { streamTurn } from "../../../src/engine/turn-stream.ts";
import { type Upstream, UpstreamError, type UpstreamRequest } from "../../../src/upstream/upstream.ts";

const request = {} as UpstreamRequest;

/** An emitter that records what the turn emitted. */
function recorder() {
  const emitted: string[] = [];
  const emitter = { emit: (type: string) => void emitted.push(type) } as unknown as TurnEmitter;
  return { emitted, emitter };
}

describe("streamTurn", () => {
  it("ends a cancelled turn at once, while the upstream is silent, and aborts the upstream", async () => {
    const seen: { signal: AbortSignal | null } = { signal: null };
    const cancel = new AbortController();
    const upstream: Upstream = {
      open: async (_request, signal) => {
        seen.signal = signal;
        return {
          first: {
            type: "response.output_item.added",
            output_index: 0,
            item: { type: "message", role: "assistant", content: [] },
          },
          rest: {
            [Symbol.asyncIterator]: () => ({
              next: () => {
                // The upstream would never send another event; the client cancels meanwhile.
                setTimeout(() => cancel.abort("cancelled"), 1);
                return new Promise<never>(() => {});
              },
            }),
          },
          usage: async (output) => ({ input_tokens: 7, output_tokens: output.length }),
        };
      },
    };
    const { emitted, emitter } = recorder();
    const result = await streamTurn(
      upstream,
      request,
      emitter,
      cancel.signal,
      () => 1000,
      () => {},
    );
    expect(emitted).toEqual(["response.output_item.added"]);
    expect(seen.signal?.aborted).toBe(true);
    expect(result?.outcome.status).toBe("cancelled");
    expect(result?.outcome.output).toMatchObject([{ type: "message", status: "incomplete" }]);
    expect(result?.outcome.usage).toEqual({ input_tokens: 7, output_tokens: 1 });
  });

  it("ends a turn cancelled before the upstream's first event without waiting for it", async () => {
    const cancel = new AbortController();
    const upstream: Upstream = {
      open: () => {
        setTimeout(() => cancel.abort("cancelled"), 1);
        return new Promise<never>(() => {});
      },
    };
    const result = await streamTurn(
      upstream,
      request,
      recorder().emitter,
      cancel.signal,
      () => 1000,
      () => {},
    );
    expect(result?.outcome).toMatchObject({ status: "cancelled", output: [], usage: null });
  });

  it("reports a failure of open() as failed, with the upstream's status for a non-streaming client", async () => {
    const upstream: Upstream = {
      open: () =>
        Promise.reject(new UpstreamError(429, "rate_limit_exceeded", "Slow down.", "rate_limit_error")),
    };
    const result = await streamTurn(
      upstream,
      request,
      recorder().emitter,
      new AbortController().signal,
      () => 1,
      () => {},
    );
    expect(result?.outcome).toMatchObject({
      status: "failed",
      error: { code: "rate_limit_exceeded", message: "Slow down." },
      usage: null,
    });
    expect(result?.failure).toEqual({ status: 429, type: "rate_limit_error" });
  });

  it("hands an unexpected failure to the session's log (never to the client) and fails the turn", async () => {
    const upstream: Upstream = { open: () => Promise.reject(new TypeError("bug in an adapter")) };
    const logged: Array<[string, unknown]> = [];
    const result = await streamTurn(
      upstream,
      request,
      recorder().emitter,
      new AbortController().signal,
      () => 1,
      (where, cause) => logged.push([where, cause]),
    );
    expect(logged).toHaveLength(1);
    expect(logged[0]?.[0]).toBe("upstream stream failed");
    expect(logged[0]?.[1]).toBeInstanceOf(TypeError);
    expect(result?.outcome).toMatchObject({
      status: "failed",
      error: { code: "server_error", message: "The upstream stream failed." },
    });
  });
});
