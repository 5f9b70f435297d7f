/**
 * The webhook event of an ended background response (src/webhooks/webhook-event.ts): OpenAI's
 * payload shape `{id, object: "event", created_at, type, data: {id}}` and nothing else; one type per
 * terminal status; the delivery id shares the event id's random part.
 */
import { describe, expect, it } from "vitest";
import { responseEndedEvent } from "../../../src/webhooks/webhook-event.ts";

describe("responseEndedEvent", () => {
  it("is OpenAI's thin payload, typed by the status the response ended with", () => {
    for (const status of ["completed", "failed", "cancelled", "incomplete"] as const) {
      const event = responseEndedEvent("resp_abc", status, 1_700_000_000_999);
      const body = JSON.parse(event.body) as Record<string, unknown>;
      expect(body).toEqual({
        id: expect.stringMatching(/^evt_[0-9a-f]{32}$/),
        object: "event",
        created_at: 1_700_000_000,
        type: `response.${status}`,
        data: { id: "resp_abc" },
      });
      expect(event.type).toBe(`response.${status}`);
      expect(event.deliveryId).toBe((body.id as string).replace("evt_", "wh_"));
    }
  });

  it("makes a new id for each event", () => {
    const a = responseEndedEvent("resp_abc", "completed", 0);
    const b = responseEndedEvent("resp_abc", "completed", 0);
    expect(a.deliveryId).not.toBe(b.deliveryId);
  });
});
