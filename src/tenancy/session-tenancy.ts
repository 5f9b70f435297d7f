/**
 * Tenancy inside a session Durable Object: the one object the session composes (session-do.ts),
 * so the session's own code only calls it at its entry points. Composes the usage outbox
 * (usage-outbox.ts) and the tenant gate (tenant-gate.ts); owns what the session tells them:
 * - an upgrade's tenancy (tenant snapshot, key, socket lease) and the socket's release;
 * - the admission of each create, WebSocket or HTTP (limits, allowed models, aliases): synchronous
 *   when the session's lease covers it, else after one sync (tenant-gate.ts);
 * - each finished turn's usage, by key and model, settling its token reservation;
 * - the safety policy of the tenant (the tenant's own replaces its `SAFETY_TENANTS` entry);
 * - revoked keys: their sockets get a 401 `error` event and are closed (within the sync bound);
 * - the tenant's own upstream key (tenant-upstream-key.ts): every snapshot and sync updates it,
 *   and an upgrade of a tenant that has one reads it before the upstream is warmed.
 */
import type { Config } from "../config/config.ts";
import type { TurnReservation, TurnScope } from "../engine/turn-engine.ts";
import type { CreateRequest } from "../protocol/create-request.ts";
import { errorEvent } from "../protocol/error-rendering.ts";
import { type ApiError, invalidApiKey } from "../protocol/errors.ts";
import type { SafetySettings } from "../safety/config.ts";
import type { PolicyOverride } from "../safety/policy.ts";
import type { ResponseOutcome, ResponseRecord } from "../store/conversation-store.ts";
import { socketTenancyOf } from "./socket-admission.ts";
import type { TenancyEnv } from "./tenancy-env.ts";
import type { Tenant } from "./tenant.ts";
import { TenantGate } from "./tenant-gate.ts";
import { TenantUpstreamKey } from "./tenant-upstream-key.ts";
import { turnTokenEstimate } from "./token-reservation.ts";
import { UsageOutbox } from "./usage-outbox.ts";

/** What tenancy reads of a socket's attachment (src/session/connection.ts keeps these fields). */
export interface TenancyAttachment {
  tenant: string;
  keyId?: string;
  lease?: string;
  ownUpstreamKey?: true;
}

/** The tenancy fields a socket's attachment keeps (connection.ts). */
export interface SocketKeys {
  keyId?: string;
  lease?: string;
  /** The tenant had its own upstream key at the upgrade (read again after a hibernation). */
  ownUpstreamKey?: true;
}

/** A create's admission: the error to report instead of running it, or what it reserved. */
export type CreateAdmission = { error: ApiError } | { reservation: TurnReservation | null };

/** Collaborators of a session's tenancy. */
export interface SessionTenancyDeps {
  ctx: DurableObjectState;
  env: TenancyEnv;
  config: Config;
  /** The session's owning tenant (null before its first request). */
  tenant(): string | null;
  /** The session's open sockets with their attachments. */
  sockets(): { ws: WebSocket; attachment: TenancyAttachment | null }[];
}

/** Tenancy of one session Durable Object. */
export class SessionTenancy {
  private readonly deps: SessionTenancyDeps;
  readonly gate: TenantGate;
  /** The safety settings the session's checks use: the deployment's, with the tenant's policy. */
  readonly safety: SafetySettings;
  /** The tenant's own upstream key, if it brought one (the session's router asks it per route). */
  readonly upstreamKey: TenantUpstreamKey;

  constructor(deps: SessionTenancyDeps) {
    this.deps = deps;
    const safetyOverrides = new Map<string, PolicyOverride>(deps.config.safety.tenants);
    this.safety = { ...deps.config.safety, tenants: safetyOverrides };
    const { config } = deps;
    this.upstreamKey = new TenantUpstreamKey({
      tenant: deps.tenant,
      controlSecret: config.controlSecret,
      defaultBaseUrl: config.upstream.baseUrl,
      redactor: config.redactor,
      controlPlane: deps.env.TENANTS !== undefined,
      sync: () => this.gate.flush(),
    });
    // Woken from hibernation: the key is gone from memory; a socket that saw one makes the next
    // turn read it again (a tenant without one costs nothing here).
    if (deps.sockets().some(({ attachment }) => attachment?.ownUpstreamKey)) this.upstreamKey.observe(true);
    this.gate = new TenantGate({
      tenants: deps.env.TENANTS,
      source: deps.ctx.id.toString(),
      tenant: deps.tenant,
      keyIds: () => [...new Set(deps.sockets().flatMap(({ attachment }) => attachment?.keyId ?? []))],
      outbox: new UsageOutbox(deps.ctx.storage.sql),
      safetyOverrides,
      onRevoked: (keyIds) => this.closeRevoked(keyIds),
      onUpstreamKey: (sealed) => this.upstreamKey.learn(sealed),
      track: (promise) => deps.ctx.waitUntil(promise),
      now: Date.now,
    });
  }

  /**
   * An upgrade about to be accepted: takes the Worker's snapshot (no sync for the limits: a lease
   * is sized to what a session admits, so the socket's first create asks for its own).
   * @returns what the socket's attachment keeps.
   */
  async upgrading(headers: Headers): Promise<SocketKeys> {
    const tenancy = socketTenancyOf(headers);
    if (!tenancy) return {};
    this.observe(tenancy.tenant);
    await this.upstreamKey.ready()?.catch(() => {}); // before warming; a failure is the first turn's
    return {
      keyId: tenancy.tenant.keyId,
      ...(tenancy.lease ? { lease: tenancy.lease } : {}),
      ...(tenancy.tenant.ownUpstreamKey ? { ownUpstreamKey: true as const } : {}),
    };
  }

  /** Admits an HTTP create: as `admit`, with the Worker's snapshot of the tenant first. */
  admitHttp(
    request: CreateRequest,
    bytes: number,
    tenant: Tenant | undefined,
  ): CreateAdmission | Promise<CreateAdmission> {
    if (tenant) this.observe(tenant);
    return this.admit(request, bytes);
  }

  /** A Worker snapshot of the tenant (≤ the key cache's bound old). */
  private observe(tenant: Tenant): void {
    this.gate.observe(tenant);
    this.upstreamKey.observe(tenant.ownUpstreamKey);
  }

  /** A socket closed: its lease goes back to the tenant. */
  released(attachment: TenancyAttachment | null | undefined): void {
    const lease = attachment?.lease;
    const tenant = attachment?.tenant;
    const tenants = this.deps.env.TENANTS;
    if (!lease || !tenant || !tenants) return;
    this.deps.ctx.waitUntil(
      tenants
        .getByName(tenant)
        .closeSocket(lease)
        .catch(() => {}),
    );
  }

  /**
   * Admits a create (WebSocket frame or HTTP request); the model may be rewritten by the tenant's
   * aliases. Its tokens are estimated by the request's own bytes (a bound of its new input, not of
   * the history it continues) plus its output bound (token-reservation.ts).
   * @returns synchronously when the session's lease covers it, else once the tenant answered.
   */
  admit(request: CreateRequest, bytes: number): CreateAdmission | Promise<CreateAdmission> {
    const verdict = this.gate.admit(
      request.model,
      bytes,
      turnTokenEstimate(bytes, request.max_output_tokens),
    );
    const applied = (v: Awaited<typeof verdict>): CreateAdmission => {
      if ("error" in v) return v;
      request.model = v.model;
      return { reservation: v.reservation };
    };
    return verdict instanceof Promise ? verdict.then(applied) : applied(verdict);
  }

  /** A create admitted and never run (refused after, dropped from its queue): its reservation goes back. */
  release(reservation: TurnReservation | undefined): void {
    this.gate.release(reservation);
  }

  /** A turn ended: its usage goes to the outbox (in the turn's commit). */
  finished(scope: TurnScope, record: ResponseRecord, outcome: ResponseOutcome | null): void {
    const usage = outcome?.usage as { input_tokens?: unknown; output_tokens?: unknown } | null | undefined;
    const count = (value: unknown) => (typeof value === "number" && Number.isFinite(value) ? value : 0);
    this.gate.finished({
      keyId: scope.keyId ?? "env",
      model: record.model,
      status: outcome?.status ?? "cancelled",
      inputTokens: count(usage?.input_tokens),
      outputTokens: count(usage?.output_tokens),
      reservation: scope.reservation,
    });
  }

  /** Flushes the outbox (the alarm calls this: no usage is lost when the session is evicted). */
  flush(): Promise<void> {
    return this.gate.flush();
  }

  /** The latest time the alarm must run to flush the outbox, or null. */
  deadline(): number | null {
    return this.gate.deadline();
  }

  private closeRevoked(keyIds: string[]): void {
    const revoked = new Set(keyIds);
    for (const { ws, attachment } of this.deps.sockets()) {
      if (!attachment?.keyId || !revoked.has(attachment.keyId)) continue;
      try {
        ws.send(JSON.stringify(errorEvent(invalidApiKey(), this.deps.config.redactor)));
        ws.close(1008, "API key revoked");
      } catch {
        // already closing
      }
    }
  }
}
