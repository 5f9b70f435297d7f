/**
 * The HTTP Responses API inside a session Durable Object (brief §5), on the same turn engine as
 * the WebSocket path. Owns the HTTP framing of engine results:
 * - `POST /v1/responses`: `stream: true` → SSE (a failure before the first event is still a plain
 *   HTTP error with its status); otherwise the terminal Response JSON (a failed response → 500);
 * - `GET /v1/responses/{id}` (`stream=true&starting_after=N` resumes the event stream: replay of
 *   the log, then live), `DELETE`, `GET …/input_items` (cursor paging), `POST …/cancel`.
 * Invariant: only store:true responses of this session's tenant that have not expired are
 * visible; everything else is `Response with id '…' not found.` (404).
 */
import { Hono } from "hono";
import { z } from "zod";
import type { LiveRegistry } from "../engine/live-responses.ts";
import { responseObject } from "../engine/response-object.ts";
import type { TurnEngine } from "../engine/turn-engine.ts";
import { SseStream } from "../http/sse-stream.ts";
import { zodToApiError } from "../protocol/client-events.ts";
import { createRequest } from "../protocol/create-request.ts";
import {
  ApiError,
  eventLogUnavailable,
  internalError,
  invalidRequest,
  responseNotFound,
} from "../protocol/errors.ts";
import type { ServerEvent } from "../protocol/server-events.ts";
import type { ConversationStore, ResponseRecord } from "../store/conversation-store.ts";
import { claimTenant, ownerTenant } from "../store/session-meta.ts";
import { randomToken } from "../util/ids.ts";
import { TENANT_HEADER } from "./internal-headers.ts";

/** Collaborators of the HTTP transport. */
export interface HttpTransportDeps {
  engine: TurnEngine;
  store: ConversationStore;
  live: LiveRegistry;
  sql: SqlStorage;
  /** store:true retention in ms: older responses are not found. */
  retentionMs: number;
  now(): number;
  /** Keeps a background promise alive (`ctx.waitUntil`). */
  track(promise: Promise<unknown>): void;
}

const NEVER_ABORTED = new AbortController().signal;

/** Prefix of the store:false scope of one HTTP request (WebSocket scopes start with `conn_`). */
export const HTTP_SCOPE_PREFIX = "http_";
const TERMINAL = new Set(["response.completed", "response.failed", "response.incomplete"]);

const retrieveQuery = z.object({
  stream: z.enum(["true", "false"]).optional(),
  starting_after: z.coerce.number().int().min(-1).optional(),
});
const listQuery = z.object({
  after: z.string().min(1).optional(),
  limit: z.coerce.number().int().min(1).max(100).default(20),
  order: z.enum(["asc", "desc"]).default("desc"),
});

function errorJson(error: ApiError): Response {
  return Response.json({ error: error.toBody() }, { status: error.status });
}

/** HTTP handlers of one session Durable Object. */
export class HttpTransport {
  private readonly deps: HttpTransportDeps;
  private readonly app: Hono;

  constructor(deps: HttpTransportDeps) {
    this.deps = deps;
    this.app = new Hono()
      .post("/v1/responses", (c) => this.create(c.req.raw))
      .get("/v1/responses/:id", (c) => this.retrieve(c.req.param("id"), c.req.raw))
      .delete("/v1/responses/:id", (c) => this.remove(c.req.param("id"), c.req.raw))
      .get("/v1/responses/:id/input_items", (c) => this.inputItems(c.req.param("id"), c.req.raw))
      .post("/v1/responses/:id/cancel", (c) => this.cancel(c.req.param("id"), c.req.raw));
    this.app.onError((error) => {
      if (error instanceof ApiError) return errorJson(error);
      console.error("http transport error", error);
      return errorJson(internalError());
    });
    this.app.notFound(() =>
      errorJson(
        new ApiError(404, {
          type: "invalid_request_error",
          code: "not_found",
          message: "Unknown route.",
          param: null,
        }),
      ),
    );
  }

  /** Routes one request forwarded by the Worker. */
  fetch(request: Request): Promise<Response> {
    return Promise.resolve(this.app.fetch(request));
  }

  /** A store:true response of this tenant that has not expired, or a 404. */
  private visible(id: string, request: Request): ResponseRecord {
    const tenant = request.headers.get(TENANT_HEADER);
    const record = this.deps.store.get(id);
    if (
      !record ||
      !tenant ||
      ownerTenant(this.deps.sql) !== tenant ||
      !record.store ||
      record.createdAt < this.deps.now() - this.deps.retentionMs
    ) {
      throw responseNotFound(id);
    }
    return record;
  }

  private async create(request: Request): Promise<Response> {
    const tenant = request.headers.get(TENANT_HEADER);
    if (!tenant || !claimTenant(this.deps.sql, tenant))
      throw invalidRequest("This session belongs to another tenant.");
    let body: unknown;
    try {
      body = await request.json();
    } catch {
      throw invalidRequest("The request body is not valid JSON.", null, "invalid_json");
    }
    const parsed = createRequest.safeParse(body);
    if (!parsed.success) throw zodToApiError(parsed.error);
    const create = parsed.data;
    for (const field of ["stream_id", "generate"] as const) {
      if (create[field] !== undefined && create[field] !== null) {
        throw invalidRequest(
          `'${field}' is only supported over the WebSocket.`,
          field,
          "unsupported_parameter",
        );
      }
    }
    // store:false over HTTP lives only for this request: a scope nobody else can name.
    const scope = { connId: `${HTTP_SCOPE_PREFIX}${randomToken(12)}`, tenant };
    const cleanup = () => {
      this.deps.store.deleteConnectionScoped(scope.connId);
    };
    if (create.stream) return this.createStreaming(create, scope, cleanup);

    let terminal: ServerEvent | null = null;
    try {
      await this.deps.engine.run(
        create,
        scope,
        {
          send: (event) => {
            if (TERMINAL.has(event.type)) terminal = event;
          },
        },
        NEVER_ABORTED,
      );
    } finally {
      cleanup();
    }
    const final = terminal as ServerEvent | null;
    if (!final) throw internalError();
    const response = final.response as { status: string; error: { code?: string; message?: string } | null };
    if (response.status === "failed" || response.status === "cancelled") {
      throw new ApiError(500, {
        type: "server_error",
        code: response.error?.code ?? "server_error",
        message: response.error?.message ?? "The response failed.",
        param: null,
      });
    }
    return Response.json(final.response);
  }

  private async createStreaming(
    create: z.infer<typeof createRequest>,
    scope: { connId: string; tenant: string },
    cleanup: () => void,
  ): Promise<Response> {
    const sse = new SseStream();
    let started!: () => void;
    const firstEvent = new Promise<"started">((resolve) => {
      started = () => resolve("started");
    });
    const sink = {
      send: (event: ServerEvent) => {
        started();
        sse.send(event);
      },
    };
    // A store:false stream dies with its client; a store:true one keeps going (resumable).
    const abort = new AbortController();
    sse.onCancel(() => {
      this.deps.live.detachEverywhere(sink);
      if (create.store === false) abort.abort("client gone");
    });
    const run = this.deps.engine.run(create, scope, sink, abort.signal).finally(cleanup);
    this.deps.track(run.catch(() => {}));
    // Wait for the first event, so a request-level failure is still a plain HTTP error status.
    await Promise.race([firstEvent, run]);
    return sse.response();
  }

  private async retrieve(id: string, request: Request): Promise<Response> {
    const record = this.visible(id, request);
    const query = retrieveQuery.safeParse(Object.fromEntries(new URL(request.url).searchParams));
    if (!query.success) throw zodToApiError(query.error);
    if (query.data.stream !== "true") {
      return Response.json(responseObject(record, this.deps.store.items(id, "output")));
    }
    const after = query.data.starting_after ?? -1;
    const sse = new SseStream();
    const live = this.deps.live.get(id);
    if (live) {
      if (!live.subscribe(sse, after)) throw eventLogUnavailable(id);
      sse.onCancel(() => live.detach(sse));
      return sse.response();
    }
    const log = this.deps.store.eventLogs.read(id);
    if (!log) throw eventLogUnavailable(id);
    for (const event of log) if (event.sequence_number > after) sse.send(event);
    sse.close();
    return sse.response();
  }

  private remove(id: string, request: Request): Response {
    this.visible(id, request);
    this.deps.live.get(id)?.cancel("cancelled");
    this.deps.store.delete(id);
    return Response.json({ id, object: "response", deleted: true });
  }

  private inputItems(id: string, request: Request): Response {
    this.visible(id, request);
    const query = listQuery.safeParse(Object.fromEntries(new URL(request.url).searchParams));
    if (!query.success) throw zodToApiError(query.error);
    const { after, limit, order } = query.data;
    let items = this.deps.store.items(id, "input");
    if (order === "desc") items = items.reverse();
    if (after) {
      const index = items.findIndex((item) => item.id === after);
      if (index < 0) throw invalidRequest(`No input item with id '${after}' in this response.`, "after");
      items = items.slice(index + 1);
    }
    const page = items.slice(0, limit);
    return Response.json({
      object: "list",
      data: page,
      first_id: page[0]?.id ?? null,
      last_id: page.at(-1)?.id ?? null,
      has_more: items.length > page.length,
    });
  }

  private async cancel(id: string, request: Request): Promise<Response> {
    this.visible(id, request);
    const live = this.deps.live.get(id);
    if (!live) {
      throw invalidRequest(
        `Response with id '${id}' is not in progress and cannot be cancelled.`,
        null,
        "response_not_cancellable",
      );
    }
    const ended = new Promise<void>((resolve) => {
      const sink = { send: (event: ServerEvent) => TERMINAL.has(event.type) && resolve() };
      live.subscribe(sink, Number.MAX_SAFE_INTEGER);
    });
    live.cancel("cancelled");
    await ended;
    const record = this.deps.store.get(id);
    if (!record) throw responseNotFound(id);
    return Response.json(responseObject(record, this.deps.store.items(id, "output")));
  }
}
