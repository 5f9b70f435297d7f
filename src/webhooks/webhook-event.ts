/**
 * The webhook events of background responses, in OpenAI's payload shape: one event when a
 * background response ends — `response.completed`, `response.failed`, `response.cancelled` or
 * `response.incomplete` — `{id: "evt_…", object: "event", created_at, type, data: {id: "resp_…"}}`,
 * `created_at` the unix second the response ended. A thin payload (the receiver reads the response
 * with `GET /v1/responses/{id}`), so it carries no model output and no credential.
 * Owns the event types, the ids (the event id `evt_…` and the delivery id `wh_…` share their
 * random part) and the body's text (made once, signed and sent as is by every attempt).
 * Source: https://developers.openai.com/api/docs/api-reference/webhook-events,
 *   https://developers.openai.com/api/docs/guides/webhooks
 */
import { toHex } from "../crypto/encoding.ts";

/** A response's terminal status → its webhook event type. */
const EVENT_TYPES = {
  completed: "response.completed",
  failed: "response.failed",
  cancelled: "response.cancelled",
  incomplete: "response.incomplete",
} as const;

/** A status a response ends with. */
export type EndedStatus = keyof typeof EVENT_TYPES;

/** One event to deliver: its delivery id (`webhook-id`), type and body. */
export interface WebhookEvent {
  /** `wh_` + 32 hex: the `webhook-id` of every attempt. */
  deliveryId: string;
  type: (typeof EVENT_TYPES)[EndedStatus];
  /** The JSON text sent (and signed) by every attempt. */
  body: string;
}

/** The event announcing that response `responseId` ended with `status` at `endedAt` (ms). */
export function responseEndedEvent(responseId: string, status: EndedStatus, endedAt: number): WebhookEvent {
  const random = new Uint8Array(16);
  crypto.getRandomValues(random);
  const hex = toHex(random);
  const type = EVENT_TYPES[status];
  const body = JSON.stringify({
    id: `evt_${hex}`,
    object: "event",
    created_at: Math.floor(endedAt / 1000),
    type,
    data: { id: responseId },
  });
  return { deliveryId: `wh_${hex}`, type, body };
}
