/**
 * A tracer with the Workers runtime's `tracing` shape (src/pipeline/turn-trace.ts `Tracer`) that
 * records its spans: name, parent (the active span when it started; synchronous callbacks only),
 * attributes, status and how often it was ended. `calls` lists every call made on it.
 */
import type { Tracer, TraceSpan } from "../../src/pipeline/turn-trace.ts";

export interface Recorded {
  name: string;
  parent: string | null;
  attributes: Record<string, string | number | boolean>;
  status: string | null;
  ends: number;
}

/** A recording tracer whose invocation is sampled (`traced`) or not. */
export function recordingTracer(traced: boolean) {
  const spans: Recorded[] = [];
  const calls: string[] = [];
  const stack: Recorded[] = [];
  const make = (name: string): TraceSpan & { record: Recorded } => {
    const record: Recorded = {
      name,
      parent: stack.at(-1)?.name ?? null,
      attributes: {},
      status: null,
      ends: 0,
    };
    spans.push(record);
    return {
      record,
      isTraced: traced,
      setAttribute(key, value) {
        record.attributes[key] = value;
        return this;
      },
      setStatus(status) {
        record.status = status.code;
        return this;
      },
      end() {
        record.ends++;
      },
    };
  };
  const tracer: Tracer = {
    getActiveSpan() {
      calls.push("getActiveSpan");
      return { isTraced: traced, setAttribute: () => {}, end: () => {} };
    },
    startActiveSpan(name, callback) {
      calls.push("startActiveSpan");
      const span = make(name);
      stack.push(span.record);
      try {
        return callback(span);
      } finally {
        stack.pop();
      }
    },
    startSpan(name) {
      calls.push("startSpan");
      return make(name);
    },
  };
  const named = (name: string) => spans.find((span) => span.name === name);
  return { tracer, spans, calls, named };
}
