/**
 * The stream step of a turn (src/engine/turn-stream.ts) against a scripted upstream: a cancel
 * ends the turn at once, without waiting for the upstream's next event (an upstream that would
 * never send one), and the upstream sees the abort; the cancelled outcome keeps the output sent so
 * far and the usage the stream counts; a failure of `open()` becomes a failed outcome with the
 * upstream's status for a non-streaming client; an unexpected failure is logged only redacted.
 */
import { describe, expect, it, vi } from "vitest";
import type { TurnEmitter } from "../../../src/engine/turn-emitter.ts";
import { streamTurn } from "../../../src/engine/turn-stream.ts";
import { SecretRedactor } from "../../../src/secrets/redactor.ts";
import { type Upstream, UpstreamError, type UpstreamRequest } from "../../../src/upstream/upstream.ts";

const request = {} as UpstreamRequest;
const SECRET = "upstream-secret-value-42";
const redactor = new SecretRedactor([SECRET]);

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
    const result = await streamTurn(upstream, request, emitter, cancel.signal, () => 1000, redactor);
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
      redactor,
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
      redactor,
    );
    expect(result?.outcome).toMatchObject({
      status: "failed",
      error: { code: "rate_limit_exceeded", message: "Slow down." },
      usage: null,
    });
    expect(result?.failure).toEqual({ status: 429, type: "rate_limit_error" });
  });

  it("logs an unexpected failure of the stream only through the redactor", async () => {
    const upstream: Upstream = {
      open: async () => ({
        first: {
          type: "response.output_item.added",
          output_index: 0,
          item: { type: "message", content: [] },
        },
        rest: {
          [Symbol.asyncIterator]: () => ({
            next: () =>
              Promise.reject(new TypeError(`fetch https://x.test/?key=${SECRET} sk-proj-abcdefghijklmnop`)),
          }),
        },
        usage: () => Promise.reject(new Error(`counting with ${SECRET} failed`)),
      }),
    };
    const logged: unknown[][] = [];
    const spy = vi.spyOn(console, "error").mockImplementation((...args: unknown[]) => void logged.push(args));
    try {
      const result = await streamTurn(
        upstream,
        request,
        recorder().emitter,
        new AbortController().signal,
        () => 1,
        redactor,
      );
      expect(result?.outcome).toMatchObject({ status: "failed", error: { code: "server_error" } });
    } finally {
      spy.mockRestore();
    }
    expect(logged.map((args) => args[0])).toEqual(["upstream stream failed", "usage count failed"]);
    const text = logged.map((args) => args.map(String).join(" ")).join("\n");
    expect(text).toContain("TypeError");
    expect(text).not.toContain(SECRET);
    expect(text).not.toContain("sk-proj-abcdefghijklmnop");
  });
});
