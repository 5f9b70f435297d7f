/**
 * Background mode's rules on a create request, as OpenAI documents them
 * (https://developers.openai.com/api/docs/guides/background, "Limits"): a background response must
 * be stored ("Background sampling requires store=true; stateless requests are rejected"), and
 * WebSocket mode does not use it ("transport-specific fields like stream and background are not
 * used", https://developers.openai.com/api/docs/guides/websocket-mode). Owns the two refusals; the
 * Worker asks the first of every HTTP create (src/worker/responses-routes.ts), the WebSocket
 * transport answers every background create with the second (src/session/ws-transport.ts).
 * Invariant: both refuse before anything is admitted or stored.
 * (OpenAI's newer pages accept `store: false` from Zero Data Retention projects and delete such a
 * response after about 10 minutes; Deltagate keeps the documented limit: docs/background.md.)
 */
import type { CreateRequest } from "./create-request.ts";
import { type ApiError, invalidRequest } from "./errors.ts";

/** 400 for `background: true` with `store: false`, else null. */
export function backgroundRefusal(request: Pick<CreateRequest, "background" | "store">): ApiError | null {
  if (request.background !== true || request.store !== false) return null;
  return invalidRequest(
    "Background mode requires store=true: a background response is stored so it can be polled, streamed and cancelled.",
    "store",
    "invalid_value",
  );
}

/** 400 `unsupported_parameter` for `background` over WebSocket mode. */
export function backgroundOverWebSocket(): ApiError {
  return invalidRequest(
    "Background mode is not supported over WebSocket; create background responses with POST /v1/responses.",
    "background",
    "unsupported_parameter",
  );
}
