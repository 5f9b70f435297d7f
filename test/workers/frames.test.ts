/**
 * Frame validation (issue #2 §3): every malformed or unknown frame gets an `error` event with
 * `status`, `type`, `code`, `message`, `param`; the socket stays open and nothing is stored.
 */
import { describe, expect, it } from "vitest";
import { countRows } from "../support/session-stub.ts";
import { connect, type Frame, uniqueSession } from "../support/ws-client.ts";

type ErrorFrame = Frame & {
  status: number;
  error: { type: string; code: string | null; message: string; param: string | null };
};

const BAD_FRAMES: Array<[string, string | ArrayBuffer, string | null, string | null]> = [
  ["invalid JSON", "{not json", "invalid_json", null],
  ["a JSON array", "[1,2]", "invalid_value", "type"],
  ["an unknown event type", JSON.stringify({ type: "session.update" }), "unknown_event_type", "type"],
  [
    "a binary frame",
    new TextEncoder().encode('{"type":"response.create"}').buffer as ArrayBuffer,
    "invalid_frame",
    null,
  ],
  [
    "a create without model",
    JSON.stringify({ type: "response.create", input: "hi" }),
    "invalid_type",
    "model",
  ],
  [
    "a function_call_output without call_id",
    JSON.stringify({
      type: "response.create",
      model: "deltagate-sim",
      input: [{ type: "function_call_output", output: "x" }],
    }),
    "invalid_type",
    "input[0].call_id",
  ],
  [
    "a temperature out of range",
    JSON.stringify({ type: "response.create", model: "deltagate-sim", input: "hi", temperature: 9 }),
    "invalid_value",
    "temperature",
  ],
  [
    "background: true",
    JSON.stringify({ type: "response.create", model: "deltagate-sim", input: "hi", background: true }),
    "unsupported_parameter",
    "background",
  ],
];

describe("malformed frames", () => {
  it("answers each with a 400 error event, keeps the socket open, and stores nothing", async () => {
    const session = uniqueSession("frames");
    const ws = await connect({ session });
    for (const [label, frame, code, param] of BAD_FRAMES) {
      const before = ws.frames.length;
      ws.send(frame);
      await ws.until((f) => f.length > before);
      const error = ws.frames[before] as ErrorFrame;
      expect(error.type, label).toBe("error");
      expect(error.status, label).toBe(400);
      expect(error.error.type, label).toBe("invalid_request_error");
      expect(error.error.code, label).toBe(code);
      expect(error.error.param, label).toBe(param);
      expect(error.error.message.length, label).toBeGreaterThan(0);
    }
    // The socket still works: a valid warm-up completes on it.
    ws.send({ type: "response.create", model: "deltagate-sim", input: "still here", generate: false });
    // Each error above ended a request on the default lane, so this is its terminal frame #N.
    const turn = await ws.turn(BAD_FRAMES.length);
    expect(turn.at(-1)?.type).toBe("response.completed");
    expect(ws.closeEvent).toBeNull();
    expect(await countRows("tenant-a", session, "responses")).toBe(1);
    ws.close();
  });

  it("answers response.steer with response.steer.failed / steering_not_supported", async () => {
    const ws = await connect({ session: uniqueSession("steer") });
    ws.send({ type: "response.steer", previous_response_id: "resp_x", input: [] });
    await ws.until((f) => f.length > 0);
    const frame = ws.frames[0] as Frame & { error: { code: string } };
    expect(frame.type).toBe("response.steer.failed");
    expect(frame.error.code).toBe("steering_not_supported");
    ws.close();
  });

  it("ignores Codex's response.processed acknowledgement", async () => {
    const ws = await connect({ session: uniqueSession("processed") });
    ws.send({ type: "response.processed", response_id: "resp_x" });
    ws.send({ type: "response.create", model: "deltagate-sim", input: "x", generate: false });
    const turn = await ws.turn(0);
    expect(ws.frames[0]?.type).toBe("response.created");
    expect(turn.at(-1)?.type).toBe("response.completed");
    ws.close();
  });
});
