/**
 * A socket's turn of a conversation another session holds (docs/conversations.md "WebSocket"): a
 * `response.create` frame naming a conversation whose id names another session Durable Object of
 * the tenant is relayed to that object, which runs it as it runs `POST /v1/responses` with
 * `conversation` and `stream: true` — the same RPC method (`createResponse`), so the conversation's
 * owner serializes its turns, keeps its warm upstream socket, and admits and meters the call once,
 * under the key the socket was opened with (admission.ts; no Worker snapshot rides with it, so the
 * owner uses its own view of the tenant). The owner's SSE events come back on the client's lane
 * unchanged (their `sequence_number`s are the response's own), with the lane's `stream_id`.
 * Owns:
 * - which creates are relayed: a conversation id naming another Durable Object, on a socket opened
 *   with a tenant key. A client secret reaches only its own session, so its create runs here and
 *   the conversation is not found (404), as over HTTP; another tenant's conversation is refused
 *   by its owner's tenant check (404);
 * - a refusal before the turn is accepted (the owner's HTTP error status) becomes the lane's
 *   `error` event with that status, as a refusal of a local create;
 * - the client going away: the relay stops reading the owner's stream, which the owner sees as an
 *   HTTP streaming client gone (store:true turns run on and are committed and appended;
 *   store:false ones are cancelled: http-transport.ts).
 * Source: https://developers.openai.com/api/docs/guides/websocket-mode
 */
import { conversationOf } from "../engine/conversation-turns.ts";
import type { EventSink } from "../engine/event-sink.ts";
import type { CreateRequest } from "../protocol/create-request.ts";
import { ApiError, conversationNotFound, internalError } from "../protocol/errors.ts";
import { isRecord } from "../protocol/json.ts";
import { parseServerEvent } from "../protocol/server-events.ts";
import { parseSse } from "../upstream/sse.ts";
import { conversationOwner } from "../util/ids.ts";
import type { Connection } from "./connection.ts";
import type { CreateOptions } from "./http-transport.ts";

/**
 * Calls `createResponse` on the session Durable Object whose hex id is `owner`, or returns null
 * when the id is not one of the namespace.
 */
export type RelayCreate = (
  owner: string,
  tenant: string,
  request: CreateRequest,
  options: CreateOptions,
) => Promise<Response> | null;

/** A create to relay: its conversation and the Durable Object that holds it. */
export interface RelayTarget {
  conversation: string;
  owner: string;
}

/** Relays a socket's creates of conversations held by other sessions of its tenant. */
export class ConversationRelay {
  private readonly objectId: string;
  private readonly send: RelayCreate;

  /**
   * @param objectId this session Durable Object's id (hex): its own conversations run here.
   * @param send the owner's `createResponse`, as the Worker calls it for HTTP.
   */
  constructor(objectId: string, send: RelayCreate) {
    this.objectId = objectId;
    this.send = send;
  }

  /**
   * Where `request` of `conn` runs: its conversation's owner when that is another session and the
   * socket may reach it, else null (here: no conversation, this session's own, a malformed value
   * or one with `previous_response_id` the engine refuses, or a client secret's socket).
   */
  targetOf(conn: Connection, request: CreateRequest): RelayTarget | null {
    if (conn.attachment.binding) return null; // a client secret reaches only its own session
    let conversation: string | null;
    try {
      conversation = conversationOf(request);
    } catch {
      return null; // refused by this session with a 400, like every other create
    }
    if (conversation === null) return null;
    const owner = conversationOwner(conversation);
    return owner !== null && owner !== this.objectId ? { conversation, owner } : null;
  }

  /**
   * Runs `request` in its conversation's session, its events to `sink`.
   * @param bytes the frame's size (the owner's admission counts it).
   * @param gone aborted when the socket closed: the owner's stream is no longer read.
   * @returns the response's id, or null when the socket went away before it was announced.
   * @throws {ApiError} the owner's refusal before it accepted the turn (its status).
   */
  async run(
    conn: Connection,
    target: RelayTarget,
    request: CreateRequest,
    bytes: number,
    sink: EventSink,
    gone: AbortSignal,
  ): Promise<string | null> {
    const { stream_id: _lane, ...rest } = request; // the lane is this socket's own
    const { attachment } = conn;
    const options: CreateOptions = {
      tenancy: { bytes },
      ...(attachment.keyId ? { relayedKeyId: attachment.keyId } : {}),
      ...(attachment.keepalive === false ? { keepalive: false } : {}),
    };
    const answer = await this.send(target.owner, attachment.tenant, { ...rest, stream: true }, options);
    if (!answer) throw conversationNotFound(target.conversation, "conversation");
    if (!answer.ok || !answer.body) throw await refusalOf(answer);
    let responseId: string | null = null;
    try {
      for await (const { data } of parseSse(answer.body, gone)) {
        const event = parseServerEvent(data);
        if (!event) throw internalError(); // the owner rendered this stream: not an event is a bug
        if (event.type === "response.created" && isRecord(event.response)) {
          responseId = typeof event.response.id === "string" ? event.response.id : null;
        }
        sink.send(event, data);
      }
    } catch (error) {
      if (gone.aborted) return responseId; // the client went away: the owner saw its reader cancelled
      throw error;
    }
    return responseId;
  }
}

/** The `ApiError` of an owner's HTTP error answer (OpenAI's envelope), with its `retry-after`. */
async function refusalOf(answer: Response): Promise<ApiError> {
  const body: unknown = await answer.json().catch(() => null);
  const error = isRecord(body) && isRecord(body.error) ? body.error : null;
  if (!error || typeof error.message !== "string" || answer.status < 400) return internalError();
  const retryAfter = answer.headers.get("retry-after");
  return new ApiError(
    answer.status,
    {
      type: typeof error.type === "string" ? error.type : "invalid_request_error",
      code: typeof error.code === "string" ? error.code : null,
      message: error.message,
      param: typeof error.param === "string" ? error.param : null,
    },
    retryAfter ? { "retry-after": retryAfter } : undefined,
  );
}
