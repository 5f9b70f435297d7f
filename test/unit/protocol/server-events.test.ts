/**
 * Reading a stream's `data` line back into a server event (src/protocol/server-events.ts
 * `parseServerEvent`): an event has a string `type` and a numeric `sequence_number`; anything else
 * is not one.
 */
import { describe, expect, it } from "vitest";
import { parseServerEvent } from "../../../src/protocol/server-events.ts";

describe("parseServerEvent", () => {
  it("reads an event with its fields", () => {
    const data = JSON.stringify({ type: "response.created", sequence_number: 0, response: { id: "resp_1" } });
    expect(parseServerEvent(data)).toEqual({
      type: "response.created",
      sequence_number: 0,
      response: { id: "resp_1" },
    });
  });

  it("is null for text that is not an event", () => {
    for (const data of [
      "not json",
      "[1]",
      "null",
      '{"type":"x"}',
      '{"sequence_number":1}',
      '{"type":1,"sequence_number":1}',
    ]) {
      expect(parseServerEvent(data), data).toBeNull();
    }
  });
});
