/**
 * Worker routes of the Responses API: the only route table (the session Durable Object exposes one
 * RPC method per route). Owns parsing each request once — body, path and query — and routing it to
 * the owning session Durable Object: a response id embeds its owner's Durable Object id
 * (util/ids.ts), so `GET`/`DELETE`/`cancel`/`input_items` and `previous_response_id` on `POST`
 * reach the owner directly, with no lookup table; a new chain goes to the session named by the
 * session header or `?session=`, else to its affinity session (affinity.ts: the session its
 * resends share), else — that one busy — a fresh one. Ids that are not Deltagate's, or not of this
 * namespace, are simply not found.
 * Source: https://platform.openai.com/docs/api-reference/responses
 */
import type { Context } from "hono";
import { z } from "zod";
import { readBodyText } from "../http/request-body.ts";
import { zodToApiError } from "../protocol/client-events.ts";
import { type CreateRequest, createRequest } from "../protocol/create-request.ts";
import { invalidRequest, previousResponseNotFound, responseNotFound } from "../protocol/errors.ts";
import { parseClientJson } from "../protocol/json-limits.ts";
import { AFFINITY_BUSY_HEADER, SESSION_HEADER, TENANT_HEADER } from "../session/internal-headers.ts";
import type { SessionDurableObject, SessionEnv } from "../session/session-do.ts";
import { timingOptIn, wantsTiming } from "../session/turn-timing.ts";
import { responseOwner } from "../util/ids.ts";
import { affinitySessionId } from "./affinity.ts";
import { namedSessionId, randomSessionId, sessionIdOf } from "./session-id.ts";

/** Hono environment of the Worker: its bindings, and the tenant set by authentication. */
export type AppEnv = { Bindings: SessionEnv; Variables: { tenant: string } };

type SessionStub = DurableObjectStub<SessionDurableObject>;

/**
 * `starting_after`: a sequence number as decimal digits (`-1` = from the start, as when omitted).
 * Strict: an empty value, a sign other than `-1`'s, a fraction, an exponent, hex or a number past
 * 2^53 − 1 is a 400, never read as some other number (an empty value once read as 0 and skipped
 * event 0).
 */
const sequenceNumber = z
  .string()
  .regex(/^(-1|0|[1-9][0-9]*)$/, "expected an integer sequence number (-1 for all events)")
  .transform(Number)
  .pipe(z.number().max(Number.MAX_SAFE_INTEGER, "sequence number too large"));

const retrieveQuery = z.object({
  stream: z.enum(["true", "false"]).optional(),
  starting_after: sequenceNumber.optional(),
});
const listQuery = z.object({
  after: z.string().min(1).optional(),
  limit: z.coerce.number().int().min(1).max(100).default(20),
  order: z.enum(["asc", "desc"]).default("desc"),
});

/** The Durable Object name of a tenant's session (tenants are namespaced apart). */
export function sessionObjectName(tenant: string, sessionId: string): string {
  return `${tenant}/${sessionId}`;
}

/** The stub of the Durable Object that owns `responseId`, or null when the id is not routable. */
function ownerStub(env: SessionEnv, responseId: string): SessionStub | null {
  const owner = responseOwner(responseId);
  if (!owner) return null;
  try {
    return env.SESSIONS.get(env.SESSIONS.idFromString(owner));
  } catch {
    return null; // well-formed but not an id of this namespace
  }
}

/** The owner of the `:id` of the route, or a 404. */
function owner(c: Context<AppEnv>): { id: string; stub: SessionStub } {
  const id = c.req.param("id") ?? "";
  const stub = ownerStub(c.env, id);
  if (!stub) throw responseNotFound(id);
  return { id, stub };
}

/** The query string of `c` validated by `schema`. */
function query<T extends z.ZodType>(c: Context<AppEnv>, schema: T): z.infer<T> {
  const parsed = schema.safeParse(c.req.query());
  if (!parsed.success) throw zodToApiError(parsed.error);
  return parsed.data;
}

/**
 * The body of `POST /v1/responses`, decompressed within the request size limit
 * (src/http/request-body.ts), parsed and validated once.
 * @throws {ApiError} 413 `request_too_large`; 415/400 for a compressed body of an unknown encoding
 *   or a corrupt one; 400 `invalid_json`, a field error, or a WebSocket-only field.
 */
async function createBody(request: Request): Promise<CreateRequest> {
  // Depth-limited before JSON.parse (src/protocol/json-limits.ts): deep nesting is a 400, never a stack overflow.
  const body = parseClientJson(await readBodyText(request));
  const parsed = createRequest.safeParse(body);
  if (!parsed.success) throw zodToApiError(parsed.error);
  for (const field of ["stream_id", "generate"] as const) {
    if (parsed.data[field] !== undefined && parsed.data[field] !== null) {
      throw invalidRequest(
        `'${field}' is only supported over the WebSocket.`,
        field,
        "unsupported_parameter",
      );
    }
  }
  return parsed.data;
}

/** `GET /v1/responses` + `Upgrade: websocket`: the session's Durable Object accepts the socket. */
export function upgrade(c: Context<AppEnv>): Promise<Response> {
  const tenant = c.get("tenant");
  const sessionId = sessionIdOf(c.req.raw);
  const headers = new Headers(c.req.raw.headers);
  headers.delete("authorization");
  headers.delete("api-key");
  headers.set(TENANT_HEADER, tenant);
  headers.set(SESSION_HEADER, sessionId);
  const stub = c.env.SESSIONS.getByName(sessionObjectName(tenant, sessionId));
  return stub.fetch(new Request(c.req.url, { method: "GET", headers }));
}

/** `POST /v1/responses`: continues the owner's chain, or starts one in the named/new session. */
export async function createResponse(c: Context<AppEnv>): Promise<Response> {
  const startedAt = performance.now();
  const request = await createBody(c.req.raw);
  // Per-stage timing (src/session/turn-timing.ts): the opt-in, and the time spent on the body.
  const timing = timingOptIn(c.req.raw.headers);
  const options = { parseMs: performance.now() - startedAt, ...(wantsTiming(timing) ? { timing } : {}) };
  const tenant = c.get("tenant");
  const previous = request.previous_response_id;
  if (previous) {
    const stub = ownerStub(c.env, previous);
    if (!stub) throw previousResponseNotFound(previous);
    return stub.createResponse(tenant, request, options);
  }
  const named = namedSessionId(c.req.raw);
  if (named) return sessionStub(c.env, tenant, named).createResponse(tenant, request, options);
  // A stateless conversation: the session its resends share (affinity.ts), unless that one is busy.
  const answer = await sessionStub(c.env, tenant, affinitySessionId(request)).createResponse(
    tenant,
    request,
    {
      ...options,
      affinity: true,
    },
  );
  if (!answer.headers.has(AFFINITY_BUSY_HEADER)) return answer;
  return sessionStub(c.env, tenant, randomSessionId()).createResponse(tenant, request, options);
}

function sessionStub(env: SessionEnv, tenant: string, sessionId: string): SessionStub {
  return env.SESSIONS.getByName(sessionObjectName(tenant, sessionId));
}

/** `GET /v1/responses/{id}` (`stream=true&starting_after=N` resumes the event stream). */
export function retrieveResponse(c: Context<AppEnv>): Promise<Response> {
  const { id, stub } = owner(c);
  const { stream, starting_after } = query(c, retrieveQuery);
  return stub.retrieveResponse(c.get("tenant"), id, {
    stream: stream === "true",
    startingAfter: starting_after ?? -1,
  });
}

/** `DELETE /v1/responses/{id}`. */
export function deleteResponse(c: Context<AppEnv>): Promise<Response> {
  const { id, stub } = owner(c);
  return stub.deleteResponse(c.get("tenant"), id);
}

/** `GET /v1/responses/{id}/input_items` (`after`, `limit`, `order`). */
export function listInputItems(c: Context<AppEnv>): Promise<Response> {
  const { id, stub } = owner(c);
  const { after, limit, order } = query(c, listQuery);
  return stub.listInputItems(c.get("tenant"), id, { after: after ?? null, limit, order });
}

/** `POST /v1/responses/{id}/cancel`. */
export function cancelResponse(c: Context<AppEnv>): Promise<Response> {
  const { id, stub } = owner(c);
  return stub.cancelResponse(c.get("tenant"), id);
}
