/**
 * Tenancy inside a session Durable Object: the one object the session composes (session-do.ts),
 * so the session's own code only calls it at its entry points. Composes the usage outbox
 * (usage-outbox.ts) and the tenant gate (tenant-gate.ts); owns what the session tells them:
 * - an upgrade's tenancy (tenant snapshot, key, socket lease) and the socket's release;
 * - the tenant's snapshot and gate the session's one admission (src/session/admission.ts) asks:
 *   nothing else calls the gate's admission (test/unit/architecture.test.ts);
 * - each metered call's usage, by key and model — turns, compactions, forwarded `input_tokens` —
 *   with its cached and cache-write tokens and its cost (`PRICES`, src/context/turn-cost.ts, priced
 *   here once: the turn's log line and timing event report the booked figure), opened when it
 *   starts and booked once when it ends, a call a restart ended on the next wake
 *   (usage-outbox.ts), settling what its admission reserved (tenant-gate.ts); a call admitted and
 *   never run gives its reservation back (`release`);
 * - the safety policy of the tenant (the tenant's own replaces its `SAFETY_TENANTS` entry);
 * - revoked keys: their sockets get a 401 `error` event and are closed (within the sync bound);
 * - the tenant's own upstream key (tenant-upstream-key.ts): every snapshot and sync updates it,
 *   and an upgrade of a tenant that has one reads it before the upstream is warmed.
 */
import type { Config } from "../config/config.ts";
import { meteredCall, priceOf, usdOf } from "../context/turn-cost.ts";
import type { TurnReservation, TurnScope } from "../engine/turn-engine.ts";
import type { TurnFacts } from "../pipeline/turn-timer.ts";
import { errorEvent } from "../protocol/error-rendering.ts";
import { invalidApiKey } from "../protocol/errors.ts";
import type { SafetySettings } from "../safety/config.ts";
import type { PolicyOverride } from "../safety/policy.ts";
import type { ResponseOutcome, ResponseRecord } from "../store/conversation-store.ts";
import { socketTenancyOf } from "./socket-admission.ts";
import type { TenancyEnv } from "./tenancy-env.ts";
import { ENV_KEY_ID, type Tenant } from "./tenant.ts";
import { TenantGate } from "./tenant-gate.ts";
import { TenantUpstreamKey } from "./tenant-upstream-key.ts";
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
  private readonly outbox: UsageOutbox;

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
    this.outbox = new UsageOutbox(deps.ctx.storage.sql);
    this.gate = new TenantGate({
      tenants: deps.env.TENANTS,
      source: deps.ctx.id.toString(),
      tenant: deps.tenant,
      keyIds: () => [...new Set(deps.sockets().flatMap(({ attachment }) => attachment?.keyId ?? []))],
      outbox: this.outbox,
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

  /** A Worker snapshot of the tenant (≤ the key cache's bound old), taken at each admission. */
  observe(tenant: Tenant): void {
    this.gate.observe(tenant);
    this.upstreamKey.observe(tenant.ownUpstreamKey);
  }

  /**
   * On wake, before any turn: the calls an earlier instance left open were ended by a restart —
   * each is booked now, once, as failed (usage-outbox.ts `recoverOpen`).
   * @returns how many were booked.
   */
  recover(): number {
    return this.outbox.recoverOpen(Date.now(), (model) =>
      priceOf(this.deps.config.prices, model) ? 0 : null,
    );
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
   * A metered call started (a turn once accepted, a compaction, a forwarded `input_tokens`): its
   * open row, so a restart before it ends still books it (usage-outbox.ts).
   * @param id the response id (a turn, a compaction) or a fresh id (a call that has none).
   */
  started(id: string, model: string, keyId: string): void {
    this.outbox.open(id, model, keyId, Date.now());
  }

  /**
   * A turn ended: its usage goes to the outbox (in the turn's commit), under the key that made it.
   * @returns its tokens and cost as booked, for the turn's log line and timing event.
   */
  finished(scope: TurnScope, record: ResponseRecord, outcome: ResponseOutcome | null): TurnFacts {
    return this.ended(
      record.id,
      scope.keyId ?? ENV_KEY_ID,
      record.model,
      outcome?.status ?? "cancelled",
      outcome?.usage,
      scope.reservation,
    );
  }

  /**
   * A metered call ended (`started` before, or not: a turn that never reached its upstream):
   * its usage into the outbox, once, in the same synchronous step that closes its open row and
   * settles what its admission reserved.
   * @returns its tokens and cost as booked.
   */
  ended(
    id: string,
    keyId: string,
    model: string,
    status: string,
    usage: unknown,
    reservation?: TurnReservation | null,
  ): TurnFacts {
    const { tokens, costNanoUsd } = meteredCall(this.deps.config.prices, model, usage);
    this.gate.finished({
      id,
      keyId,
      model,
      status,
      inputTokens: tokens.input,
      cachedTokens: tokens.cached,
      cacheWriteTokens: tokens.cacheWrite,
      outputTokens: tokens.output,
      costNanoUsd,
      reservation: reservation ?? undefined,
    });
    return {
      input_tokens: tokens.input,
      cached_tokens: tokens.cached,
      cache_write_tokens: tokens.cacheWrite,
      output_tokens: tokens.output,
      cost_usd: usdOf(costNanoUsd),
    };
  }

  /**
   * A call admitted that ended without `ended` (refused after its admission, dropped from its
   * queue, failed before it started): its reservation goes back; a settled one is ignored.
   */
  release(reservation: TurnReservation | null | undefined): void {
    this.gate.release(reservation ?? undefined);
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
