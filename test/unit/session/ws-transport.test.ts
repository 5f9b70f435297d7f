/**
 * The frame of an event on a WebSocket lane (src/session/ws-transport.ts `laneFrame`): built from
 * the event's one serialization, it is the same text as serializing the event with its lane's
 * `stream_id` — on the default lane the event as is, on a named lane `stream_id` last, replacing
 * any `stream_id` the event carried. And the flood fast path's frame test (`isDefaultLaneCreate`).
 */
import { describe, expect, it } from "vitest";
import type { ServerEvent } from "../../../src/protocol/server-events.ts";
import { isDefaultLaneCreate } from "../../../src/session/flood-screen.ts";
import { laneFrame } from "../../../src/session/ws-transport.ts";

const event: ServerEvent = {
  type: "response.output_text.delta",
  sequence_number: 4,
  item_id: "msg_1",
  delta: 'a "quoted" }\u00e9',
};

describe("laneFrame", () => {
  it("is the event's JSON on the default lane", () => {
    expect(laneFrame(event, JSON.stringify(event), null)).toBe(JSON.stringify(event));
    expect(laneFrame(event, undefined, null)).toBe(JSON.stringify(event));
  });

  it("appends the lane's stream_id to the event's JSON, as serializing both would", () => {
    const expected = JSON.stringify({ ...event, stream_id: 'lane-"1"' });
    expect(laneFrame(event, JSON.stringify(event), 'lane-"1"')).toBe(expected);
    expect(laneFrame(event, undefined, 'lane-"1"')).toBe(expected);
  });

  it("replaces a stream_id the event carried", () => {
    const carrying: ServerEvent = { ...event, stream_id: "upstream's" };
    const frame = laneFrame(carrying, JSON.stringify(carrying), "mine");
    expect(frame).toBe(JSON.stringify({ ...carrying, stream_id: "mine" }));
    expect(frame.match(/stream_id/g)).toHaveLength(1);
  });
});

describe("isDefaultLaneCreate", () => {
  it.each([
    ['{"type":"response.create","model":"m","input":"x"}', true],
    [' { "type" : "response.create", "input": "x"}', true],
    ['{"type":"response.create","stream_id":"a","input":"x"}', false],
    ['{"model":"m","type":"response.create"}', false], // not first: the ordinary path decides
    ['{"type":"response.created"}', false],
    ['{"type":"response.create" garbage', true], // refused as the create it claims to be while full
    ['{"type":"deltagate.response.resume","response_id":"r"}', false],
    ['{"type":"response.processed"}', false],
  ])("%s → %s", (frame, expected) => {
    expect(isDefaultLaneCreate(frame)).toBe(expected);
  });
});
