/**
 * Hostile input at the boundary (issue #10 item 5), over both transports through the real
 * Worker: 10,000-level nesting in `tool_choice`, `text` and an item field, item `type`s named
 * after `Object.prototype` members, and `metadata` beyond OpenAI's caps. Each must get a 400 in
 * OpenAI's shape (an `error` event on WebSocket, a JSON error on HTTP) — never a 5xx — and the
 * socket must stay open and keep serving turns.
 */
import { describe, expect, it } from "vitest";
import { connect, type Frame, KEY_A, uniqueSession, workerFetch } from "../support/ws-client.ts";

const MODEL = "deltagate-sim";
const deep = (levels: number) => `${"[".repeat(levels)}${"]".repeat(levels)}`;

/** A create body as raw JSON text: `extra` is spliced in as is (it may be too deep to build). */
const body = (extra: string) => `{"model":"${MODEL}","input":"hi",${extra}}`;
const bodyWithInput = (input: string) => `{"model":"${MODEL}","input":${input}}`;
const item = (type: string) => JSON.stringify([{ type, role: "user", content: "x" }]);

/** [label, create body (JSON text), expected code, expected param]. */
const HOSTILE: Array<[string, string, string, string]> = [
  [
    "10,000 levels in tool_choice",
    body(`"tool_choice":${deep(10_000)}`),
    "invalid_value",
    "tool_choice[0][0]",
  ],
  ["10,000 levels in text", body(`"text":{"format":${deep(10_000)}}`), "invalid_value", "text.format[0]"],
  [
    "10,000 levels in an item field",
    bodyWithInput(`[{"type":"function_call_output","call_id":"c1","output":${deep(10_000)}}]`),
    "invalid_value",
    "input[0].output",
  ],
  ["an item of type constructor", bodyWithInput(item("constructor")), "invalid_value", "input[0]"],
  ["an item of type __proto__", bodyWithInput(item("__proto__")), "invalid_value", "input[0]"],
  ["an item of type toString", bodyWithInput(item("toString")), "invalid_value", "input[0]"],
  ["an item of type hasOwnProperty", bodyWithInput(item("hasOwnProperty")), "invalid_value", "input[0]"],
  [
    "17 metadata keys",
    body(
      `"metadata":${JSON.stringify(Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, "v"])))}`,
    ),
    "object_above_max_properties",
    "metadata",
  ],
  [
    "a 65-character metadata key",
    body(`"metadata":{"${"k".repeat(65)}":"v"}`),
    "string_above_max_length",
    "metadata",
  ],
  [
    "a 513-character metadata value",
    body(`"metadata":{"note":"${"v".repeat(513)}"}`),
    "string_above_max_length",
    "metadata.note",
  ],
];

type ErrorFrame = Frame & {
  status: number;
  error: { type: string; code: string | null; message: string; param: string | null };
};

describe("hostile input", () => {
  it("answers each shape over WebSocket with a 400 error event and keeps the socket serving", async () => {
    const ws = await connect({ session: uniqueSession("hostile-ws") });
    for (const [label, create, code, param] of HOSTILE) {
      const before = ws.frames.length;
      ws.send(`{"type":"response.create",${create.slice(1)}`);
      await ws.until((f) => f.length > before);
      const error = ws.frames[before] as ErrorFrame;
      expect(error.type, label).toBe("error");
      expect(error.status, label).toBe(400);
      expect(error.error, label).toMatchObject({ type: "invalid_request_error", code, param });
    }
    ws.send({ type: "response.create", model: MODEL, input: "still here [sim:tokens=3]" });
    const turn = await ws.turn(HOSTILE.length);
    expect(turn.at(-1)?.type).toBe("response.completed");
    expect(ws.closeEvent).toBeNull();
    ws.close();
  });

  it("answers each shape over HTTP with a 400 JSON error", async () => {
    const session = uniqueSession("hostile-http");
    for (const [label, create, code, param] of HOSTILE) {
      const response = await workerFetch("/v1/responses", {
        method: "POST",
        headers: {
          authorization: `Bearer ${KEY_A}`,
          "content-type": "application/json",
          "session-id": session,
        },
        body: create,
      });
      const text = await response.text();
      expect(response.status, `${label}: ${text.slice(0, 200)}`).toBe(400);
      expect(JSON.parse(text).error, label).toMatchObject({ type: "invalid_request_error", code, param });
    }
    // The session still answers.
    const ok = await workerFetch("/v1/responses", {
      method: "POST",
      headers: {
        authorization: `Bearer ${KEY_A}`,
        "content-type": "application/json",
        "session-id": session,
      },
      body: JSON.stringify({ model: MODEL, input: "still here [sim:tokens=3]" }),
    });
    expect(ok.status).toBe(200);
  });
});
