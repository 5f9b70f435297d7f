/**
 * Worker routes of the HTTP Responses API (brief §5). Owns routing to the owning session Durable
 * Object: a response id embeds its owner's Durable Object id (util/ids.ts), so `GET`/`DELETE`/
 * `cancel`/`input_items` and `previous_response_id` on `POST` reach the owner directly, with no
 * lookup table; a new chain goes to the session named by the session header or `?session=`, else
 * a fresh one. Ids that are not Deltagate's, or not of this namespace, are simply not found.
 */
import type { Context } from "hono";
import type { Env } from "../config/env.ts";
import { previousResponseNotFound, responseNotFound } from "../protocol/errors.ts";
import { parseClientJson } from "../protocol/json-limits.ts";
import { SESSION_HEADER, TENANT_HEADER } from "../session/internal-headers.ts";
import { responseOwner } from "../util/ids.ts";
import { sessionIdOf } from "./session-id.ts";

type AppEnv = { Bindings: Env; Variables: { tenant: string } };

/** The Durable Object name of a tenant's session (tenants are namespaced apart). */
export function sessionObjectName(tenant: string, sessionId: string): string {
  return `${tenant}/${sessionId}`;
}

/** The stub of the Durable Object that owns `responseId`, or null when the id is not routable. */
export function ownerStub(env: Env, responseId: string): DurableObjectStub | null {
  const owner = responseOwner(responseId);
  if (!owner) return null;
  try {
    return env.SESSIONS.get(env.SESSIONS.idFromString(owner));
  } catch {
    return null; // well-formed but not an id of this namespace
  }
}

/** Forwards a request to a session Durable Object with the internal routing headers set. */
export function forward(
  stub: DurableObjectStub,
  request: Request,
  tenant: string,
  sessionId: string | null,
  body?: string,
): Promise<Response> {
  const headers = new Headers(request.headers);
  headers.delete("authorization");
  headers.delete("api-key");
  headers.set(TENANT_HEADER, tenant);
  if (sessionId) headers.set(SESSION_HEADER, sessionId);
  else headers.delete(SESSION_HEADER);
  const init: RequestInit = { method: request.method, headers };
  if (body !== undefined) init.body = body;
  return stub.fetch(new Request(request.url, init));
}

/** `POST /v1/responses`: continues the owner's chain, or starts one in the named/new session. */
export async function createResponse(c: Context<AppEnv>): Promise<Response> {
  const text = await c.req.text();
  const body = parseClientJson(text);
  const previous =
    typeof body === "object" && body !== null && "previous_response_id" in body
      ? (body as { previous_response_id: unknown }).previous_response_id
      : null;
  if (typeof previous === "string" && previous.length > 0) {
    const stub = ownerStub(c.env, previous);
    if (!stub) throw previousResponseNotFound(previous);
    return forward(stub, c.req.raw, c.get("tenant"), null, text);
  }
  const sessionId = sessionIdOf(c.req.raw);
  const stub = c.env.SESSIONS.getByName(sessionObjectName(c.get("tenant"), sessionId));
  return forward(stub, c.req.raw, c.get("tenant"), sessionId, text);
}

/** `GET|DELETE /v1/responses/{id}…` and `POST …/cancel`: forwarded to the owner. */
export async function byResponseId(c: Context<AppEnv>): Promise<Response> {
  const id = c.req.param("id") ?? "";
  const stub = ownerStub(c.env, id);
  if (!stub) throw responseNotFound(id);
  const body = c.req.method === "POST" ? await c.req.text() : undefined;
  return forward(stub, c.req.raw, c.get("tenant"), null, body);
}
