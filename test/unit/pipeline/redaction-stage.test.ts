import { describe, expect, it } from "vitest";
import {
  MAX_UPSTREAM_ERROR_JSON,
  MAX_UPSTREAM_MESSAGE,
  redactedUpstream,
} from "../../../src/pipeline/redaction-stage.ts";
import { REDACTED, SecretRedactor } from "../../../src/secrets/redactor.ts";
import {
  type Upstream,
  UpstreamError,
  type UpstreamEvent,
  type UpstreamRequest,
} from "../../../src/upstream/upstream.ts";

const KEY = "Zq8ty3PLAINalnum7730keyXy";
const redactor = new SecretRedactor([KEY]);
const request = {} as UpstreamRequest;
const signal = new AbortController().signal;

function upstreamOf(events: UpstreamEvent[], failure?: unknown): Upstream {
  return {
    contextWindow: 1234,
    open: async () => {
      const [first, ...rest] = events;
      if (!first) throw failure;
      return {
        first,
        rest: {
          async *[Symbol.asyncIterator]() {
            yield* rest;
            if (failure) throw failure;
          },
        },
      };
    },
  };
}

async function collect(upstream: Upstream): Promise<UpstreamEvent[]> {
  const stream = await upstream.open(request, signal);
  const out = [stream.first];
  for await (const event of stream.rest) out.push(event);
  return out;
}

describe("redaction stage", () => {
  it("redacts an UpstreamError from open(), keeping status, retry-after, and capping after redaction", async () => {
    const message = `${"x".repeat(MAX_UPSTREAM_MESSAGE - 10)} ${KEY} tail`;
    const failure = new UpstreamError(429, `code_${KEY}`, message, "rate_limit_error", 1500);
    const wrapped = redactedUpstream(upstreamOf([], failure), redactor);
    const error = await wrapped.open(request, signal).catch((cause: unknown) => cause);
    expect(error).toBeInstanceOf(UpstreamError);
    const e = error as UpstreamError;
    expect([e.status, e.type, e.retryAfterMs, e.code]).toEqual([
      429,
      "rate_limit_error",
      1500,
      `code_${REDACTED}`,
    ]);
    expect(e.message).not.toContain(KEY.slice(0, 8)); // not even a prefix cut by the cap
    expect(e.message.length).toBe(MAX_UPSTREAM_MESSAGE);
    expect(wrapped.contextWindow).toBe(1234);
  });

  it("redacts error events, terminal errors and incomplete_details; model output by value only", async () => {
    const shaped = "sk-proj-NotConfiguredExampleKey0123";
    const events: UpstreamEvent[] = [
      { type: "response.output_text.delta", delta: `the model wrote ${shaped}` },
      { type: "error", code: "x", message: `bad ${KEY}`, error: { message: KEY } },
      {
        type: "response.failed",
        response: { status: "failed", error: { code: "e", message: KEY }, output: [{ text: KEY }] },
      },
      { type: "response.incomplete", response: { incomplete_details: { reason: KEY } } },
    ];
    const out = await collect(redactedUpstream(upstreamOf(events), redactor));
    expect(out[0]).toEqual(events[0]);
    expect(JSON.stringify(out.slice(1, 2))).not.toContain(KEY);
    expect(out[1]?.type).toBe("error");
    expect(out[2]).toEqual({
      type: "response.failed",
      response: { status: "failed", error: { code: "e", message: REDACTED }, output: [{ text: REDACTED }] },
    });
    expect(out[3]).toEqual({
      type: "response.incomplete",
      response: { incomplete_details: { reason: REDACTED } },
    });
  });

  it("redacts an UpstreamError thrown mid-stream and passes other failures (aborts) through", async () => {
    const midstream = new UpstreamError(502, "upstream_error", `lost ${KEY}`);
    const wrapped = redactedUpstream(upstreamOf([{ type: "response.created" }], midstream), redactor);
    const error = await collect(wrapped).catch((cause: unknown) => cause);
    expect((error as UpstreamError).message).toBe(`lost ${REDACTED}`);
    const abort = new DOMException("aborted", "AbortError");
    const aborted = redactedUpstream(upstreamOf([{ type: "response.created" }], abort), redactor);
    expect(await collect(aborted).catch((cause: unknown) => cause)).toBe(abort);
  });

  it("keeps only a capped code and message of an oversized error object", async () => {
    const huge = {
      code: "c".repeat(2_000),
      message: `${KEY} ${"m".repeat(MAX_UPSTREAM_ERROR_JSON)}`,
      extra: "x",
    };
    const events: UpstreamEvent[] = [
      { type: "error", ...huge },
      { type: "response.failed", response: { status: "failed", error: huge } },
    ];
    const out = await collect(redactedUpstream(upstreamOf(events), redactor));
    expect(out[0]).toEqual({
      type: "error",
      code: "c".repeat(MAX_UPSTREAM_MESSAGE),
      message: `${REDACTED} ${"m".repeat(MAX_UPSTREAM_MESSAGE - REDACTED.length - 1)}`,
    });
    const error = (out[1]!.response as { error: Record<string, string> }).error;
    expect(Object.keys(error).sort()).toEqual(["code", "message"]);
    expect(JSON.stringify(error).length).toBeLessThan(MAX_UPSTREAM_ERROR_JSON);
  });
});
