/**
 * The floor relay's Worker (bench/floor/wrangler.toml): answers `GET /healthz` (so the bench's
 * stack starter and scripts/runtime-origin.ts find it as they find Deltagate), checks the client's
 * key on the WebSocket upgrade of `/v1/responses`, and hands the upgrade to the session's Durable
 * Object (relay.ts), named by the `session-id` header as Deltagate names its own (a fresh one
 * without it). Everything else is 404.
 * Invariant: no upgrade reaches a Durable Object without the key.
 */
import { type FloorEnv, FloorRelay } from "./relay.ts";

export { FloorRelay };

const encoder = new TextEncoder();

/** Constant-time check of `Authorization: Bearer <FLOOR_API_KEY>` (an unset key admits nobody). */
function authorized(header: string | null, key: string | undefined): boolean {
  if (!key || !header) return false;
  const given = encoder.encode(header);
  const expected = encoder.encode(`Bearer ${key}`);
  return given.byteLength === expected.byteLength && crypto.subtle.timingSafeEqual(given, expected);
}

export default {
  async fetch(request: Request, env: FloorEnv): Promise<Response> {
    const path = new URL(request.url).pathname.replace(/\/+$/, "");
    if (path === "/healthz") return Response.json({ status: "ok" });
    if (path !== "/v1/responses") return new Response("not found", { status: 404 });
    if (request.headers.get("upgrade")?.toLowerCase() !== "websocket") {
      return new Response("WebSocket upgrade required", { status: 426 });
    }
    if (!authorized(request.headers.get("authorization"), env.FLOOR_API_KEY)) {
      return new Response("unauthorized", { status: 401 });
    }
    const session = request.headers.get("session-id");
    const id = session ? env.RELAYS.idFromName(session) : env.RELAYS.newUniqueId();
    return env.RELAYS.get(id).fetch(request);
  },
} satisfies ExportedHandler<FloorEnv>;
