/**
 * Hostile suite, settings sizes (issue #10 item 5): `instructions`, `tools`, `text` and every other
 * setting have documented caps in UTF-8 bytes (src/protocol/size-limits.ts, docs/limits.md);
 * over them, HTTP answers 400 `invalid_request_error` naming the parameter and WebSocket an `error`
 * event with the same body (socket open). Nothing is stored or sent upstream for a refused create.
 */
import { describe, expect, it } from "vitest";
import {
  MAX_INSTRUCTIONS_BYTES,
  MAX_OTHER_SETTING_BYTES,
  MAX_TEXT_BYTES,
  MAX_TOOLS_BYTES,
} from "../../../src/protocol/size-limits.ts";
import { countRows } from "../../support/session-stub.ts";
import { connect, KEY_A, uniqueSession, workerFetch } from "../../support/ws-client.ts";

const MODEL = "deltagate-sim";

const OVERSIZED: Array<[string, Record<string, unknown>, string]> = [
  ["instructions", { instructions: "漢".repeat(MAX_INSTRUCTIONS_BYTES / 3 + 1) }, "string_above_max_length"],
  [
    "tools",
    { tools: [{ type: "function", name: "f", description: "d".repeat(MAX_TOOLS_BYTES), parameters: {} }] },
    "setting_too_large",
  ],
  [
    "text",
    {
      text: {
        format: { type: "json_schema", name: "s", schema: { description: "s".repeat(MAX_TEXT_BYTES) } },
      },
    },
    "setting_too_large",
  ],
  [
    "reasoning",
    { reasoning: { effort: "low", summary: "x".repeat(MAX_OTHER_SETTING_BYTES) } },
    "setting_too_large",
  ],
  [
    "prompt_cache_key",
    { prompt_cache_key: "k".repeat(MAX_OTHER_SETTING_BYTES + 1) },
    "string_above_max_length",
  ],
];

describe("hostile: oversized settings", () => {
  it.each(OVERSIZED)(
    "%s over its cap: 400 naming it over HTTP and WebSocket",
    async (param, settings, code) => {
      const session = uniqueSession(`settings-${param}`);
      const res = await workerFetch("/v1/responses", {
        method: "POST",
        headers: {
          authorization: `Bearer ${KEY_A}`,
          "content-type": "application/json",
          "session-id": session,
        },
        body: JSON.stringify({ model: MODEL, input: "hi", ...settings }),
      });
      expect(res.status).toBe(400);
      const body = (await res.json()) as { error: unknown };
      expect(body.error).toMatchObject({ type: "invalid_request_error", code, param });
      const ws = await connect({ session });
      ws.send({ type: "response.create", model: MODEL, input: "hi", ...settings });
      expect((await ws.turn(0))[0]).toEqual({ type: "error", status: 400, error: body.error });
      ws.send({ type: "response.create", model: MODEL, input: "fine [sim:tools=0]" });
      expect((await ws.turn(1)).at(-1)?.type).toBe("response.completed");
      ws.close();
      expect(await countRows("tenant-a", session, "responses")).toBe(1); // only the fine one
    },
  );
});
