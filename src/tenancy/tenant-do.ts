/**
 * The tenant Durable Object: one per tenant (`TENANTS.getByName(tenant id)`), the control plane's
 * store. Composes `TenantStore`; owns the RPC surface the data plane and the admin API use:
 * - `resolve`: a key (by hash) → the tenant snapshot the Worker caches (api-keys.ts, key-cache.ts);
 * - `sync`: a session's usage outbox batch, admitted turns and lease in; its new lease (what it may
 *   admit without asking, lease-policy.ts), the limits and settings out (tenant-gate.ts), with the
 *   revoked keys among those the session's sockets use and the tenant's own upstream key, sealed
 *   (tenant-upstream-key.ts unseals it in the session);
 * - `openSocket` / `closeSocket`: socket leases (max_sockets, sessions_per_key);
 * - `webhookEndpoint`: the tenant's webhook URL and sealed signing secret, for a session about to
 *   deliver (tenant-webhook.ts unseals it there);
 * - admin: create, update, keys, usage, the webhook endpoint.
 * Why a Durable Object per tenant: strongly consistent (a revocation or a budget is exact here), no
 * global bottleneck (Cloudflare calls one global limiter object an anti-pattern, and one object
 * serves about 1,000 requests/s), and it is off the hot path: the Worker and the sessions cache
 * what they read from it (docs/tenancy.md).
 * Source: https://developers.cloudflare.com/durable-objects/best-practices/rules-of-durable-objects/
 */
import { DurableObject } from "cloudflare:workers";
import { parseConfig } from "../config/config.ts";
import type { Env } from "../config/env.ts";
import { mintKey, TENANT_ID } from "./api-keys.ts";
import { dayOf, minuteOf } from "./clock.ts";
import { controlKeys, sealUpstreamKey, sealWebhookSecret } from "./control-crypto.ts";
import { LEASE_TTL_MS, type LeaseBudget, leaseAllowance } from "./lease-policy.ts";
import type { TenantRegistryDurableObject } from "./registry-do.ts";
import {
  type LimitsPatch,
  patchLimits,
  type Tenant,
  type TenantLimits,
  type TenantSettings,
} from "./tenant.ts";
import {
  type Admitted,
  type KeyRecord,
  TenantStore,
  type UsageEntry,
  type UsageRow,
} from "./tenant-store.ts";

/** The environment a tenant Durable Object reads: the registry it records itself in. */
interface TenantObjectEnv extends Env {
  TENANT_REGISTRY?: DurableObjectNamespace<TenantRegistryDurableObject>;
}

/** What a session reports to its tenant (tenant-gate.ts). */
export interface SyncReport {
  /** The session Durable Object's id (exactly-once per source). */
  source: string;
  entries: UsageEntry[];
  /** Turns admitted since the last sync, by minute (turns_per_minute, request_bytes_per_minute). */
  admitted: Admitted[];
  /** Keys of the session's open sockets, to learn which were revoked. */
  keyIds: string[];
  /** What the session holds and needs of the counted limits; absent: it holds nothing. */
  lease?: LeaseReport;
}

/** A session's lease as it sends a sync (tenant-gate.ts). */
export interface LeaseReport {
  /** The minute and day its allowances are of (the session's clock). */
  minute: number;
  day: string;
  /** Its allowances: turns, request bytes and tokens it may still admit without asking. */
  turns: number;
  bytes: number;
  tokens: number;
  /** Tokens it holds besides: unsettled reservations, and finished turns' tokens not in this batch. */
  reserved: number;
  /** What its admissions waiting for this sync need together. */
  want: { turns: number; bytes: number; tokens: number };
  /** What it admitted (tokens: reserved) since its previous sync: its pace, the headroom it gets. */
  recent: { turns: number; bytes: number; tokens: number };
}

/** A session's new allowances, valid `LEASE_TTL_MS` from the sync and within `minute` / `day`. */
export interface LeaseGrant {
  minute: number;
  day: string;
  turns: number;
  bytes: number;
  tokens: number;
}

/** What a session enforces until its next sync. */
export interface SyncReply {
  /** Highest outbox seq applied: the session deletes its outbox up to it. */
  applied: number;
  /** Null when the tenant does not exist (any more). */
  limits: TenantLimits | null;
  settings: TenantSettings;
  /** The session's new lease (null: it sent none, or the tenant has no such limit to lease). */
  lease: LeaseGrant | null;
  revoked: string[];
  /**
   * The tenant's own upstream key, still sealed (control-crypto.ts; null: none): only the session
   * unseals it, in memory (tenant-upstream-key.ts), so it never travels or rests in clear.
   */
  upstreamKey: string | null;
}

/** The admin view of a tenant. */
export interface TenantInfo {
  id: string;
  name: string;
  created_at: number;
  limits: TenantLimits;
  settings: TenantSettings;
  own_upstream_key: boolean;
  /** Its webhook endpoint's URL (docs/webhooks.md), or null. */
  webhook_url: string | null;
  open_sockets: number;
}

/** The admin view of a tenant's webhook endpoint (never its secret). */
export interface WebhookInfo {
  object: "webhook_endpoint";
  url: string;
  created_at: number;
}

/** What a session needs to deliver: the endpoint and its secret, still sealed. */
export interface StoredWebhook {
  url: string;
  secretSealed: string;
}

/** One tenant's control-plane state. */
export class TenantDurableObject extends DurableObject<TenantObjectEnv> {
  private readonly store: TenantStore;

  constructor(ctx: DurableObjectState, env: TenantObjectEnv) {
    super(ctx, env);
    this.store = new TenantStore(ctx.storage);
  }

  /**
   * The tenant snapshot for a key: a minted key by its hash (null when unknown or revoked), or,
   * with `hash` null, a `DELTAGATE_API_KEYS` key of `tenant` (its row is created on first use, so
   * the quick-start tenant has limits, settings and a ledger like any other).
   */
  async resolve(tenant: string, hash: string | null, keyId: string): Promise<Tenant | null> {
    return this.snapshot(tenant, hash, keyId, hash === null);
  }

  /**
   * The tenant snapshot for a client secret of `tenant` (src/auth/client-secret.ts): null when the
   * control plane has no such tenant (no row is created: a secret alone does not make a tenant).
   */
  async resolveForSecret(tenant: string, keyId: string): Promise<Tenant | null> {
    return this.snapshot(tenant, null, keyId, false);
  }

  private async snapshot(
    tenant: string,
    hash: string | null,
    keyId: string,
    ensure: boolean,
  ): Promise<Tenant | null> {
    if (ensure) await this.ensure(tenant, tenant);
    const row = this.store.tenant();
    if (!row || row.id !== tenant) return null;
    if (hash !== null && !this.store.useKey(hash, keyId, Date.now())) return null;
    return {
      id: row.id,
      keyId,
      limits: row.limits,
      settings: row.settings,
      ownUpstreamKey: row.upstream_key_sealed !== null,
    };
  }

  /**
   * Applies a session's usage batch and admitted turns, then renews its lease; returns the lease,
   * the current limits and settings. Synchronous: one sync is one step of this object, so no two
   * leases are sized on the same figures.
   */
  sync(report: SyncReport): SyncReply {
    const now = Date.now();
    const applied = this.store.applyUsage(report.source, report.entries, now);
    this.store.addAdmitted(report.admitted, now);
    const row = this.store.tenant();
    const lease = row && report.lease ? this.lease(report.source, report.lease, row.limits, now) : null;
    if (!lease) this.store.setLease(report.source, null);
    return {
      applied,
      limits: row?.limits ?? null,
      settings: row?.settings ?? {},
      lease,
      revoked: this.store.revokedAmong(report.keyIds),
      upstreamKey: row?.upstream_key_sealed ?? null,
    };
  }

  /**
   * Sizes and records a session's new lease (lease-policy.ts): its allowances in the tenant's
   * current minute and day; what it held of an earlier minute or day holds nothing now.
   */
  private lease(source: string, held: LeaseReport, limits: TenantLimits, now: number): LeaseGrant | null {
    const {
      turns_per_minute: turnLimit,
      request_bytes_per_minute: byteLimit,
      tokens_per_day: tokenLimit,
    } = limits;
    if (turnLimit === null && byteLimit === null && tokenLimit === null) return null;
    const minute = minuteOf(now);
    const day = dayOf(now);
    const counted = this.store.counters(minute, day);
    const others = this.store.leasesOfOthers(source, minute, day, now);
    const sessions = others.sessions + 1;
    const sameMinute = held.minute === minute;
    const sameDay = held.day === day;
    const { want, recent } = held;
    const size = (limit: number | null, budget: Omit<LeaseBudget, "limit">, oversize: boolean): number =>
      limit === null ? 0 : leaseAllowance({ limit, ...budget }, sessions, 1, oversize);
    const turns = size(
      turnLimit,
      {
        used: counted.turns,
        others: others.turns,
        reserved: 0,
        allowance: sameMinute ? held.turns : 0,
        want: want.turns,
        recent: recent.turns,
      },
      false,
    );
    const bytes = size(
      byteLimit,
      {
        used: counted.bytes,
        others: others.bytes,
        reserved: 0,
        allowance: sameMinute ? held.bytes : 0,
        want: want.bytes,
        recent: recent.bytes,
      },
      true,
    );
    const tokens = size(
      tokenLimit,
      {
        used: counted.tokens,
        others: others.tokens,
        reserved: held.reserved,
        allowance: sameDay ? held.tokens : 0,
        want: want.tokens,
        recent: recent.tokens,
      },
      false,
    );
    this.store.setLease(source, {
      minute,
      turns,
      bytes,
      day,
      tokens: tokenLimit === null ? 0 : held.reserved + tokens,
      expiresAt: now + LEASE_TTL_MS,
    });
    return { minute, day, turns, bytes, tokens };
  }

  /**
   * Takes a lease for a new socket (before its upgrade).
   * @returns null when granted, else the limit that refused it.
   */
  openSocket(
    lease: string,
    keyId: string,
    session: string,
    ttlMs: number,
  ): "max_sockets" | "sessions_per_key" | null {
    const row = this.store.tenant();
    if (!row) return null;
    const now = Date.now();
    return this.store.openSocket({ lease, keyId, session, expiresAt: now + ttlMs }, row.limits, now);
  }

  /** Releases a socket lease (the socket closed). */
  closeSocket(lease: string): void {
    this.store.closeSocket(lease);
  }

  // ---- admin (src/tenancy/admin-api.ts) ----

  /** Creates the tenant (idempotent); returns its info and whether it is new. */
  async ensure(id: string, name: string): Promise<{ info: TenantInfo; created: boolean }> {
    if (!TENANT_ID.test(id)) throw new Error("invalid tenant id");
    const created = this.store.create(id, name, Date.now());
    if (created) await this.env.TENANT_REGISTRY?.getByName("registry").add(id, Date.now());
    const info = this.info();
    if (!info) throw new Error("tenant not created");
    return { info, created };
  }

  info(): TenantInfo | null {
    const row = this.store.tenant();
    if (!row) return null;
    return {
      id: row.id,
      name: row.name,
      created_at: row.created_at,
      limits: row.limits,
      settings: row.settings,
      own_upstream_key: row.upstream_key_sealed !== null,
      webhook_url: this.store.webhook()?.url ?? null,
      open_sockets: this.store.openSockets(Date.now()),
    };
  }

  /**
   * Sets limits (merged into the current ones; null lifts one), settings (merged) and/or the
   * tenant's own upstream key (sealed here; null removes it).
   * @throws {Error} when the tenant does not exist or no control secret (`DELTAGATE_SECRET`) can seal the key.
   */
  async update(change: {
    limits?: LimitsPatch;
    settings?: TenantSettings;
    upstreamApiKey?: string | null;
  }): Promise<TenantInfo> {
    const row = this.store.tenant();
    if (!row) throw new Error("no such tenant");
    let sealed: string | null | undefined;
    if (change.upstreamApiKey === null) sealed = null;
    else if (change.upstreamApiKey !== undefined) {
      const keys = controlKeys(parseConfig(this.env).controlSecret);
      if (!keys) throw new Error("DELTAGATE_SECRET is not set: cannot store an upstream key");
      sealed = await sealUpstreamKey(await keys, row.id, change.upstreamApiKey);
    }
    this.store.update({
      ...(change.limits ? { limits: patchLimits(row.limits, change.limits) } : {}),
      ...(change.settings ? { settings: { ...row.settings, ...change.settings } } : {}),
      ...(sealed !== undefined ? { sealed } : {}),
    });
    return this.info()!;
  }

  /**
   * Mints a key: the key itself is returned once and never stored (only its hash).
   * @throws {Error} when the tenant does not exist or no control secret (`DELTAGATE_SECRET`) is set.
   */
  async createKey(name: string | null): Promise<{ key: string; record: KeyRecord }> {
    const row = this.store.tenant();
    if (!row) throw new Error("no such tenant");
    const keys = controlKeys(parseConfig(this.env).controlSecret);
    if (!keys) throw new Error("DELTAGATE_SECRET is not set: keys cannot be minted");
    const minted = await mintKey((await keys).signing, row.id);
    const now = Date.now();
    this.store.addKey(minted.keyId, minted.hash, minted.prefix, name, now);
    return {
      key: minted.key,
      record: {
        key_id: minted.keyId,
        prefix: minted.prefix,
        name,
        created_at: now,
        last_used_at: null,
        revoked_at: null,
      },
    };
  }

  /**
   * Sets the webhook endpoint: `url` (checked by the admin API) and its signing secret, sealed
   * here; answers the endpoint with the secret, the only time it is shown.
   * @throws {Error} when the tenant does not exist or no control secret (`DELTAGATE_SECRET`) can seal the secret.
   */
  async setWebhook(url: string, secret: string): Promise<WebhookInfo & { secret: string }> {
    const row = this.store.tenant();
    if (!row) throw new Error("no such tenant");
    const keys = controlKeys(parseConfig(this.env).controlSecret);
    if (!keys) throw new Error("DELTAGATE_SECRET is not set: cannot store a webhook secret");
    const now = Date.now();
    this.store.setWebhook(url, await sealWebhookSecret(await keys, row.id, secret), now);
    return { object: "webhook_endpoint", url, secret, created_at: now };
  }

  /** The webhook endpoint as the admin API shows it, or null. */
  webhookInfo(): WebhookInfo | null {
    const webhook = this.store.webhook();
    return webhook ? { object: "webhook_endpoint", url: webhook.url, created_at: webhook.createdAt } : null;
  }

  /** Removes the webhook endpoint (events not delivered yet are dropped); false when there was none. */
  removeWebhook(): boolean {
    return this.store.removeWebhook();
  }

  /** For a session about to deliver: the endpoint and its sealed secret, or null. */
  webhookEndpoint(): StoredWebhook | null {
    const webhook = this.store.webhook();
    return webhook ? { url: webhook.url, secretSealed: webhook.secretSealed } : null;
  }

  listKeys(): KeyRecord[] {
    return this.store.keys();
  }

  revokeKey(keyId: string): boolean {
    return this.store.revokeKey(keyId, Date.now());
  }

  usage(since: string): UsageRow[] {
    return this.store.usage(since);
  }
}
