/**
 * Worker routes of the Responses API: the only route table (the session Durable Object exposes one
 * RPC method per route). Owns parsing each request once — body, path and query — and routing it to
 * the owning session Durable Object: a response id embeds its owner's Durable Object id
 * (util/ids.ts), so `GET`/`DELETE`/`cancel`/`input_items` and `previous_response_id` on `POST`
 * reach the owner directly, with no lookup table; a new chain goes to the session named by the
 * session header or `?session=`, else a fresh one. Ids that are not Deltagate's, or not of this
 * namespace, are simply not found. `POST /v1/responses/compact` and `/v1/responses/input_tokens`
 * read a context the same way (the owner of `previous_response_id`, else the named session).
 * A request authenticated by a client secret (src/auth/) reaches its bound session only: naming
 * another session is 401 `client_secret_session_mismatch`; a response id of any other Durable
 * Object (another session of its tenant or another tenant's) is not found, exactly as an unknown
 * id — checked here from the id alone, with no storage read; the rest of its binding (models,
 * size, `max_turns`) is applied by the session Durable Object's one admission
 * (src/session/admission.ts) to every call alike: the binding travels with each RPC call, and in
 * `BINDING_HEADER` with an upgrade.
 * A new chain without a named session (and without a client secret) goes to its conversation's
 * affinity session (affinity.ts: the session its resends share), else — that one busy — a fresh
 * one.
 * Source: https://platform.openai.com/docs/api-reference/responses
 */
import type { Context } from "hono";
import { z } from "zod";
import { clientSecretSessionMismatch, websocketProtocolRequired } from "../auth/errors.ts";
import { parseConfig } from "../config/config.ts";
import { conversationOf } from "../engine/conversation-turns.ts";
import { keepaliveWanted } from "../http/client-options.ts";
import { readBodyText } from "../http/request-body.ts";
import { timingOptIn, wantsTiming } from "../pipeline/turn-timing.ts";
import { backgroundRefusal } from "../protocol/background.ts";
import { zodToApiError } from "../protocol/client-events.ts";
import { compactRequest, inputTokensRequest } from "../protocol/compact-request.ts";
import { type CreateRequest, createRequest } from "../protocol/create-request.ts";
import {
  ApiError,
  conversationNotFound,
  invalidRequest,
  previousResponseNotFound,
  responseNotFound,
} from "../protocol/errors.ts";
import { parseClientJson } from "../protocol/json-limits.ts";
import { utf8Length } from "../protocol/size-limits.ts";
import {
  AFFINITY_BUSY_HEADER,
  BINDING_HEADER,
  SESSION_HEADER,
  type SecretTurnBinding,
  TENANT_HEADER,
} from "../session/internal-headers.ts";
import type { SessionDurableObject } from "../session/session-do.ts";
import { admitSocket, TENANCY_HEADER } from "../tenancy/socket-admission.ts";
import { conversationOwner, responseOwner } from "../util/ids.ts";
import { affinitySessionId } from "./affinity.ts";
import type { AppEnv } from "./app-env.ts";
import { CREDENTIAL_QUERY_PARAMS, echoedProtocol, offeredProtocols } from "./auth.ts";
import { namedSessionId, newSessionId, sessionIdOf } from "./session-id.ts";

export type { AppEnv } from "./app-env.ts";

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

/**
 * The hex id of the session Durable Object a client secret is bound to, or null for a tenant key.
 * `idFromName` is computed in the Worker: no storage, no network.
 */
function boundOwner(c: Context<AppEnv>): string | null {
  const secret = c.get("principal").secret;
  if (!secret) return null;
  return c.env.SESSIONS.idFromName(sessionObjectName(secret.tenant, secret.sessionId)).toString();
}

/**
 * The stub of the Durable Object that owns `responseId`, or null when the id is not routable or,
 * for a client secret, not of its session.
 */
function ownerStub(c: Context<AppEnv>, responseId: string): SessionStub | null {
  return ownerStubOf(c, responseOwner(responseId));
}

/**
 * The stub of the Durable Object whose hex id is `owner` (decoded from a response or conversation
 * id), or null when there is none, it is not of this namespace or, for a client secret, not its
 * session.
 */
export function ownerStubOf(c: Context<AppEnv>, owner: string | null): SessionStub | null {
  if (!owner) return null;
  const bound = boundOwner(c);
  if (bound !== null && owner !== bound) return null;
  try {
    return c.env.SESSIONS.get(c.env.SESSIONS.idFromString(owner));
  } catch {
    return null; // well-formed but not an id of this namespace
  }
}

/** The owner of the `:id` of the route, or a 404. */
function owner(c: Context<AppEnv>): { id: string; stub: SessionStub } {
  const id = c.req.param("id") ?? "";
  const stub = ownerStub(c, id);
  if (!stub) throw responseNotFound(id);
  return { id, stub };
}

/**
 * The session a request opens: a client secret's own (naming another one is a 401), else the one
 * the request names, else a fresh one.
 * @throws {ApiError} 400 `invalid_session_id`, 401 `client_secret_session_mismatch`.
 */
export function sessionFor(c: Context<AppEnv>): string {
  const secret = c.get("principal").secret;
  if (!secret) return sessionIdOf(c.req.raw);
  const named = namedSessionId(c.req.raw);
  if (named !== null && named !== secret.sessionId) throw clientSecretSessionMismatch();
  return secret.sessionId;
}

/** What the session Durable Object enforces of a client secret per turn, or undefined for a tenant key. */
function turnBinding(c: Context<AppEnv>): SecretTurnBinding | undefined {
  const secret = c.get("principal").secret;
  if (!secret) return undefined;
  const { id, expiresAt, models, maxTurns, maxRequestBytes } = secret;
  return { id, expiresAt, models, maxTurns, maxRequestBytes };
}

/** The query string of `c` validated by `schema`. */
export function query<T extends z.ZodType>(c: Context<AppEnv>, schema: T): z.infer<T> {
  const parsed = schema.safeParse(c.req.query());
  if (!parsed.success) throw zodToApiError(parsed.error);
  return parsed.data;
}

/**
 * The body of `POST /v1/responses`, decompressed within the request size limit
 * (src/http/request-body.ts), parsed and validated once.
 * @throws {ApiError} 413 `request_too_large`; 415/400 for a compressed body of an unknown encoding
 *   or a corrupt one; 400 `invalid_json`, a field error, a WebSocket-only field, or `background`
 *   without `store`.
 */
async function createBody(request: Request): Promise<{ request: CreateRequest; bytes: number }> {
  const text = await readBodyText(request);
  // Depth-limited before JSON.parse (src/protocol/json-limits.ts): deep nesting is a 400, never a stack overflow.
  const body = parseClientJson(text);
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
  const refused = backgroundRefusal(parsed.data); // background needs store (src/protocol/background.ts)
  if (refused) throw refused;
  return { request: parsed.data, bytes: utf8Length(text) };
}

/**
 * `GET /v1/responses` + `Upgrade: websocket`: the tenant's socket limits are checked first (429
 * with `retry-after`, never upgraded: src/tenancy/socket-admission.ts), then the session's
 * Durable Object accepts the socket. Credentials never reach it (headers, the credential
 * protocol, the query parameters are removed); the 101 echoes the first non-credential protocol
 * the client offered.
 * @throws {ApiError} 400 `websocket_protocol_required` when the offer holds only credentials.
 */
export async function upgrade(c: Context<AppEnv>): Promise<Response> {
  const tenant = c.get("tenant");
  const protocol = echoedProtocol(c.req.raw.headers);
  if (protocol === null && offeredProtocols(c.req.raw.headers).length > 0) throw websocketProtocolRequired();
  const sessionId = sessionFor(c);
  const config = parseConfig(c.env);
  const admitted = await admitSocket(
    c.env.TENANTS,
    c.get("principal").account,
    sessionId,
    config.maxConnectionMs,
  );
  if (admitted instanceof ApiError) throw admitted;
  const headers = new Headers(c.req.raw.headers);
  headers.delete("authorization");
  headers.delete("api-key");
  headers.delete("sec-websocket-protocol");
  headers.delete(BINDING_HEADER);
  headers.set(TENANT_HEADER, tenant);
  headers.set(SESSION_HEADER, sessionId);
  const binding = turnBinding(c);
  if (binding) headers.set(BINDING_HEADER, JSON.stringify(binding));
  headers.set(TENANCY_HEADER, JSON.stringify(admitted));
  const url = new URL(c.req.url);
  for (const name of CREDENTIAL_QUERY_PARAMS) url.searchParams.delete(name);
  const stub = c.env.SESSIONS.getByName(sessionObjectName(tenant, sessionId));
  const accepted = await stub.fetch(new Request(url, { method: "GET", headers }));
  // Not upgraded (another tenant's session, a failure): the lease goes back at once.
  if (accepted.status !== 101 && admitted.lease && c.env.TENANTS) {
    c.executionCtx.waitUntil(
      c.env.TENANTS.getByName(tenant)
        .closeSocket(admitted.lease)
        .catch(() => {}),
    );
  }
  if (protocol === null || accepted.status !== 101 || !accepted.webSocket) return accepted;
  // The session's own headers (the store:false grace it granted) plus the echoed protocol.
  const answered = new Headers(accepted.headers);
  answered.set("sec-websocket-protocol", protocol);
  return new Response(null, { status: 101, webSocket: accepted.webSocket, headers: answered });
}

/**
 * `POST /v1/responses`: continues the owner's chain, or starts one in the named/new session, whose
 * admission (src/session/admission.ts) applies a client secret's binding and the tenant's limits.
 */
export async function createResponse(c: Context<AppEnv>): Promise<Response> {
  const startedAt = performance.now();
  const { request, bytes } = await createBody(c.req.raw);
  // Per-stage timing (src/pipeline/turn-timing.ts): the opt-in, and the time spent on the body.
  const timing = timingOptIn(c.req.raw.headers);
  boundSession(c);
  const options = {
    parseMs: performance.now() - startedAt,
    ...(wantsTiming(timing) ? { timing } : {}),
    ...admissionOptions(c, bytes),
    // `x-deltagate-keepalive: 0` (src/http/client-options.ts).
    ...(keepaliveWanted(c.req.raw.headers) ? {} : { keepalive: false }),
  };
  const tenant = c.get("tenant");
  // A conversation's turn runs where the conversation lives (its id names the Durable Object).
  const conversation = conversationOf(request); // 400 with previous_response_id
  if (conversation !== null) {
    const stub = ownerStubOf(c, conversationOwner(conversation));
    if (!stub) throw conversationNotFound(conversation, "conversation");
    return stub.createResponse(tenant, request, options);
  }
  const previous = request.previous_response_id;
  if (previous) {
    const stub = ownerStub(c, previous);
    if (!stub) throw previousResponseNotFound(previous);
    return stub.createResponse(tenant, request, options);
  }
  // A client secret's session, else the named one.
  const named = c.get("principal").secret ? sessionFor(c) : namedSessionId(c.req.raw);
  if (named) return sessionStub(c, tenant, named).createResponse(tenant, request, options);
  // A stateless conversation: the session its resends share (affinity.ts), unless that one is busy.
  const affinity = { ...options, affinity: true };
  const answer = await sessionStub(c, tenant, affinitySessionId(request)).createResponse(
    tenant,
    request,
    affinity,
  );
  if (!answer.headers.has(AFFINITY_BUSY_HEADER)) return answer;
  return sessionStub(c, tenant, newSessionId()).createResponse(tenant, request, options);
}

function sessionStub(c: Context<AppEnv>, tenant: string, sessionId: string): SessionStub {
  return c.env.SESSIONS.getByName(sessionObjectName(tenant, sessionId));
}

/**
 * The session a request reading a context goes to: the owner of `previous_response_id`, else the
 * named/new one (a client secret's own: `boundSession`).
 */
function contextStub(
  c: Context<AppEnv>,
  request: { previous_response_id?: string | null | undefined; conversation?: unknown },
): SessionStub {
  boundSession(c);
  // `input_tokens` of a conversation: where the conversation lives (400 with previous_response_id).
  const conversation = conversationOf(request);
  if (conversation !== null) {
    const stub = ownerStubOf(c, conversationOwner(conversation));
    if (!stub) throw conversationNotFound(conversation, "conversation");
    return stub;
  }
  const previous = request.previous_response_id;
  if (!previous) return c.env.SESSIONS.getByName(sessionObjectName(c.get("tenant"), sessionFor(c)));
  const stub = ownerStub(c, previous);
  if (!stub) throw previousResponseNotFound(previous);
  return stub;
}

/** The body of a unary endpoint, within the request size limit, validated by `schema`, and its size. */
export async function unaryBody<T extends z.ZodType>(
  request: Request,
  schema: T,
): Promise<{ body: z.infer<T>; bytes: number }> {
  const text = await readBodyText(request);
  const parsed = schema.safeParse(parseClientJson(text));
  if (!parsed.success) throw zodToApiError(parsed.error);
  return { body: parsed.data, bytes: utf8Length(text) };
}

/**
 * A client secret's session rule, checked before any session is called: naming another session is
 * refused even when `previous_response_id` routes the request (a parent of another session is not
 * found: `ownerStub`). Nothing for a tenant key.
 * @throws {ApiError} 401 `client_secret_session_mismatch`.
 */
function boundSession(c: Context<AppEnv>): void {
  if (c.get("principal").secret) sessionFor(c);
}

/** What the session's admission (src/session/admission.ts) needs of the caller besides the body. */
function admissionOptions(c: Context<AppEnv>, bytes: number) {
  const binding = turnBinding(c);
  return { ...(binding ? { binding } : {}), tenancy: { tenant: c.get("principal").account, bytes } };
}

/** `POST /v1/responses/compact`: compacts a context (src/engine/compact-endpoints.ts). */
export async function compactResponse(c: Context<AppEnv>): Promise<Response> {
  const { body, bytes } = await unaryBody(c.req.raw, compactRequest);
  return contextStub(c, body).compactResponse(c.get("tenant"), body, admissionOptions(c, bytes));
}

/** `POST /v1/responses/input_tokens`: counts a context's input tokens. */
export async function countInputTokens(c: Context<AppEnv>): Promise<Response> {
  const { body, bytes } = await unaryBody(c.req.raw, inputTokensRequest);
  return contextStub(c, body).countInputTokens(c.get("tenant"), body, admissionOptions(c, bytes));
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
