/**
 * The composition of a session Durable Object: builds its modules from the environment's
 * configuration and wires them together — storage and its dependents (the safety checks' chain
 * marks go with their responses), the store:false scope lifecycle, upstreams (with the tenant's
 * own upstream key where it replaces the deployment's), the turn pipeline
 * and engine, cross-session transfer, the one visibility rule, both transports and the unary
 * context endpoints (compaction, token counting). The Durable
 * Object (session-do.ts) keeps only lifecycle and entry points.
 * Invariant: one instance of each module per Durable Object instance; every module that decides
 * who sees a response gets the same `VisibilitySettings` (visibility.ts).
 */

import * as workers from "cloudflare:workers";
import { type Config, parseConfig } from "../config/config.ts";
import { ContextWindow } from "../context/context-window.ts";
import { CompactEndpoints } from "../engine/compact-endpoints.ts";
import { LiveRegistry } from "../engine/live-responses.ts";
import { recoverInterrupted } from "../engine/recovery.ts";
import { TurnEngine } from "../engine/turn-engine.ts";
import { createTurnPipeline } from "../pipeline/pipeline.ts";
import { genAiProvider, tracerOf } from "../pipeline/turn-trace.ts";
import { SessionSafety } from "../safety/session-safety.ts";
import { ConversationStore } from "../store/conversation-store.ts";
import { ownerTenantReader } from "../store/session-meta.ts";
import { SessionTenancy } from "../tenancy/session-tenancy.ts";
import type { TenancyEnv } from "../tenancy/tenancy-env.ts";
import { ENV_KEY_ID } from "../tenancy/tenant.ts";
import { webhookTarget } from "../tenancy/tenant-webhook.ts";
import { ClientPresence } from "../upstream/client-presence.ts";
import { createAdapter, UpstreamRouter } from "../upstream/router.ts";
import { Admission } from "./admission.ts";
import { compactionServices } from "./compaction-services.ts";
import { attachmentOf, ConnectionRegistry } from "./connection.ts";
import { ConversationRelay, type RelayCreate } from "./conversation-relay.ts";
import { ConversationsHttp } from "./conversations-http.ts";
import { logFailure } from "./failure-log.ts";
import { HttpTransport } from "./http-transport.ts";
import { SessionLifecycle } from "./lifecycle.ts";
import { newScopeId } from "./scope.ts";
import { ScopeLifecycle } from "./scope-lifecycle.ts";
import { socketLifetime } from "./socket-lifetime.ts";
import { ResponseTransfer, type TransferDeps } from "./transfer.ts";
import { maySee, type VisibilitySettings } from "./visibility.ts";
import type { WarmDeps } from "./warm-on-connect.ts";
import { WebhookDeliveries } from "./webhook-deliveries.ts";
import { WebSocketTransport } from "./ws-transport.ts";

const NEVER_ABORTED = new AbortController().signal;

/**
 * The runtime's tracer (`tracing` of `cloudflare:workers`), detected once per isolate: null on a
 * runtime without it, and then a turn's tracing costs one null check (src/pipeline/turn-trace.ts).
 */
const TRACER = tracerOf(workers);

/** The modules of one session Durable Object. */
export interface SessionParts {
  config: Config;
  /**
   * The parts with a lifecycle (wake, socket opened, frame, socket gone, alarm, deadline), in
   * the order their hooks run (lifecycle.ts): the Durable Object iterates them, never naming one.
   */
  lifecycle: SessionLifecycle;
  /** The session's client sockets (connection.ts). */
  connections: ConnectionRegistry;
  live: LiveRegistry;
  ws: WebSocketTransport;
  http: HttpTransport;
  /** `/v1/responses/compact` and `/v1/responses/input_tokens` (src/engine/compact-endpoints.ts). */
  compaction: CompactEndpoints;
  transfer: ResponseTransfer;
  /** What warm-on-connect needs (warm-on-connect.ts). */
  warm: WarmDeps;
  /** The tenant's limits, settings and usage ledger, seen from this session (src/tenancy/). */
  tenancy: SessionTenancy;
  /** The one admission of every call that reaches a model or counts against the tenant (admission.ts). */
  admission: Admission;
  /** The Conversations API of the conversations this session holds (conversations-http.ts). */
  conversations: ConversationsHttp;
}

/** What the composition needs from the Durable Object. */
export interface SessionHooks {
  /** The scope ids of the open sockets (at construction). */
  openScopes: ReadonlySet<string>;
  /** The session's client sockets, as the runtime knows them (`ctx.getWebSockets()`). */
  sockets(): WebSocket[];
  /** Re-arms the alarm (a response was imported: a new retention deadline). */
  scheduleAlarm(): Promise<void>;
  /** Asks another session Durable Object for an export (transfer.ts `TransferDeps.exportFrom`). */
  exportFrom: TransferDeps["exportFrom"];
  /** `createResponse` of another session of the namespace (conversation-relay.ts). */
  relayCreate: RelayCreate;
}

/** Builds the modules of the session Durable Object with state `ctx`. */
export function composeSession(ctx: DurableObjectState, env: TenancyEnv, hooks: SessionHooks): SessionParts {
  const config = parseConfig(env);
  const objectId = ctx.id.toString();
  const store = new ConversationStore(ctx.storage);
  const ownerTenant = ownerTenantReader(ctx.storage.sql);
  const tenancy = new SessionTenancy({
    ctx,
    env,
    config,
    tenant: ownerTenant,
    sockets: () => ctx.getWebSockets().map((ws) => ({ ws, attachment: attachmentOf(ws) })),
  });
  const safety = new SessionSafety({
    settings: tenancy.safety, // the deployment's, with the tenant's own policy (src/tenancy/)
    sql: ctx.storage.sql,
    tenant: ownerTenant,
    ai: env.AI ?? null,
  });
  store.addDependent(safety.cache); // chain marks go with their responses
  const scopes = new ScopeLifecycle({ store, now: Date.now });
  const live = new LiveRegistry(config.abandonGraceMs);
  const presence = new ClientPresence(hooks.openScopes);
  const adapterDefaults = { ...config, presence };
  // Each route's credential: a tenant's own upstream key replaces the deployment's (src/tenancy/).
  const keys = tenancy.upstreamKey;
  const router = new UpstreamRouter(
    config.routes,
    (route) => createAdapter(route, adapterDefaults),
    (route) => keys.keyFor(route),
  );
  keys.onChange(() => router.rekey()); // sockets opened with an old key carry no further turn
  const visibility: VisibilitySettings = config;
  const transfer = new ResponseTransfer({
    store,
    safety,
    ownerId: objectId,
    visibility,
    now: Date.now,
    purgeEnded: () => scopes.purge(),
    exportFrom: hooks.exportFrom,
  });
  const window = new ContextWindow(store);
  const pipeline = createTurnPipeline({
    // A tenant key past its bound is confirmed first (a round trip only then: the warm path awaits nothing).
    routeChain: (model) => keys.ready()?.then(() => router.upstreamFor(model)) ?? router.upstreamFor(model),
    window,
    safety,
    redactor: config.redactor,
    compaction: compactionServices(config, () => ownerTenant() ?? ""),
  });
  // Background responses' webhook events (docs/webhooks.md): made in a turn's last commit,
  // delivered by the alarm.
  const webhooks = new WebhookDeliveries({
    outbox: store.webhooks,
    target: () => webhookTarget(env, config.controlSecret, ownerTenant(), config.redactor),
    privateTargets: config.webhooks.privateTargets,
    retry: config.webhooks.retry,
    now: Date.now,
    send: (input, init) => fetch(input, init),
    scheduleAlarm: () => ctx.waitUntil(hooks.scheduleAlarm()),
    log: (where, responseId, cause) =>
      logFailure(where, { session: objectId, responseIds: [responseId] }, cause, config.redactor),
  });
  const engine = new TurnEngine({
    store,
    history: (parentId) => window.history(parentId),
    upstreamFor: (turn) => pipeline.upstreamFor(turn),
    ownerId: objectId,
    now: Date.now,
    keepaliveMs: config.keepaliveMs,
    live,
    importRemote: async (id, scope) => {
      const imported = await transfer.importRemote(id, scope);
      if (imported) await hooks.scheduleAlarm();
      return imported;
    },
    mayContinue: (parent, scope) => maySee(parent, scope.connId, "continue", Date.now(), visibility),
    logFailure: (where, responseId, cause) =>
      logFailure(where, { session: objectId, responseIds: [responseId] }, cause, config.redactor),
    // The usage ledger: a turn's start is opened in its first commit, its end booked in its last.
    started: (scope, record) => tenancy.started(record.id, record.model, scope.keyId ?? ENV_KEY_ID),
    finished: (scope, record, outcome) => {
      const booked = tenancy.finished(scope, record, outcome); // the usage outbox, in the turn's commit
      webhooks.ended(record, outcome); // a background response's event, in the same commit
      ctx.waitUntil(hooks.scheduleAlarm()); // the outboxes' deadlines
      return booked;
    },
  });
  const shared = {
    engine,
    store,
    live,
    visibility,
    now: Date.now,
    turnLog: config.turnLog,
    tracer: TRACER,
    providerOf: (model: string) => genAiProvider(router.routeFor(model)?.api),
  };
  const admission = new Admission({
    sql: ctx.storage.sql,
    tenancy,
    objectId,
    historyTokens: (responseId) => store.usageTokens(responseId),
    now: Date.now,
  });
  const ws = new WebSocketTransport({
    ...shared,
    maxConnectionMs: config.maxConnectionMs,
    redactor: config.redactor,
    objectId,
    admit: (conn, request, bytes) =>
      admission.admit({
        kind: "turn",
        model: request.model,
        previousResponseId: request.previous_response_id,
        bytes,
        maxOutputTokens: request.generate === false ? 0 : request.max_output_tokens,
        binding: conn.attachment.binding ?? null,
        keyId: conn.attachment.keyId,
      }),
    relay: new ConversationRelay(objectId, hooks.relayCreate),
  });
  const http = new HttpTransport({ ...shared, objectId, track: (promise) => ctx.waitUntil(promise) });
  const compaction = new CompactEndpoints({
    engine,
    keys: config.compactionKeys.then((secrets) => ({ secrets })),
    routeFor: (model) => router.routeFor(model),
    // A tenant key past its bound is confirmed first, as for a turn (`routeChain` above).
    unary: async (model, path, build) => {
      await keys.ready();
      return router.unary(model, path, build, NEVER_ABORTED);
    },
    meter: tenancy,
    turnUpstream: (turn) => pipeline.upstreamFor(turn),
    ownerId: objectId,
    newScopeId: () => newScopeId("http"),
    now: Date.now,
  });
  const warm = { ctx, router, lastModel: () => store.lastModel(), models: config.models };
  const connections = new ConnectionRegistry();
  // The lifecycle parts, in the order their hooks run: a restart's interrupted turns are ended
  // before the scopes are settled; on the alarm, sockets past their lifetime are closed first,
  // vanished sockets are announced to every part, then retention, then the usage outbox's flush,
  // then webhook deliveries.
  const lifecycle = new SessionLifecycle([
    {
      name: "interrupted turns", // a background one's webhook event is made with its end
      onWake: () =>
        void recoverInterrupted(store, Date.now(), (record, outcome) => webhooks.ended(record, outcome)),
    },
    socketLifetime({
      sockets: hooks.sockets,
      connections,
      transport: ws,
      maxConnectionMs: config.maxConnectionMs,
    }),
    {
      name: "live responses",
      onSocketGone: ({ conn }) => {
        for (const sink of conn?.sinks.values() ?? []) live.detachEverywhere(sink);
      },
    },
    {
      name: "client presence", // the warm upstream socket's keep-warm policy
      onSocketOpened: (connId) => presence.opened(connId),
      onFrame: () => presence.active(),
      onSocketGone: ({ connId }) => {
        if (connId) presence.closed(connId);
      },
    },
    scopes,
    {
      name: "retention", // store:true responses past RESPONSE_RETENTION_DAYS
      onAlarm: ({ now }) => void store.expireBefore(now - config.retentionMs),
      nextDeadline: () => {
        const oldest = store.oldestStored();
        return oldest === null ? null : oldest + config.retentionMs;
      },
    },
    {
      name: "tenancy",
      // Calls a restart ended are booked once (src/tenancy/usage-outbox.ts); the alarm flushes them.
      onWake: () => {
        if (tenancy.recover() > 0) ctx.waitUntil(hooks.scheduleAlarm());
      },
      onSocketGone: ({ attachment }) => tenancy.released(attachment), // the tenant's socket lease
      onAlarm: () => tenancy.flush(), // usage not reported yet (no loss on eviction)
      nextDeadline: () => tenancy.deadline(), // the usage outbox's flush
    },
    webhooks, // last: its alarm waits for the receivers' answers
  ]);
  const conversations = new ConversationsHttp({
    conversations: store.conversations,
    ownerId: objectId,
    now: Date.now,
  });
  return {
    config,
    lifecycle,
    connections,
    live,
    ws,
    http,
    compaction,
    transfer,
    warm,
    tenancy,
    admission,
    conversations,
  };
}
