/**
 * A tenant's own upstream key inside its session Durable Object: the one place it is unsealed and
 * the one rule of which routes it replaces. Owns:
 * - what the session knows of it: the sealed value the tenant's Durable Object last gave (each
 *   sync reply carries it, tenant-gate.ts) and, unsealed with the control secret (`Config.controlSecret`), the key itself,
 *   held in memory only (never in the session's SQLite, never in the Worker's `Tenant` snapshot,
 *   which says only whether there is one);
 * - the bound: a key is used for at most `UPSTREAM_KEY_TTL_MS` after the tenant last confirmed
 *   it; a turn that would use an older one syncs first (one round trip, only after that long
 *   without one: the sync that follows every turn keeps a busy session confirmed). A snapshot
 *   saying "no key" (every HTTP request, every upgrade) drops it at once; one saying "a key" that
 *   this session does not hold — or a socket attachment saying so after a hibernation — makes the
 *   next turn sync first. A key set where there was none is picked up by the next sync or
 *   snapshot (until then the deployment's key, as before);
 * - the routing rule (`keyFor`): the tenant's key replaces the deployment's for every route to the
 *   deployment's default upstream (`UPSTREAM_BASE_URL`), whatever model or alias leads there;
 *   routes to another base URL keep their own key, so the key only ever goes where it is valid.
 * Invariants: the unsealed key reaches the session's redactor before any upstream call carries it;
 * a change reaches the session's upstreams (`onChange`: the router disposes adapters built with the
 * old key, closing their warm sockets) before the next turn is built; a tenant key that cannot be
 * confirmed or unsealed fails the turn (503) rather than sending the deployment's key or a stale one.
 */

import { ApiError } from "../protocol/errors.ts";
import type { SecretRedactor } from "../secrets/redactor.ts";
import type { UpstreamRoute } from "../upstream/routes.ts";
import { controlKeys, openUpstreamKey } from "./control-crypto.ts";
import { KEY_CACHE_TTL_MS } from "./key-cache.ts";

/** Longest use of a tenant's upstream key after its tenant last confirmed it, in ms: the key cache's bound. */
export const UPSTREAM_KEY_TTL_MS = KEY_CACHE_TTL_MS;

/** Collaborators of a session's tenant upstream key. */
export interface TenantUpstreamKeyDeps {
  /** The session's owning tenant (the sealed key is bound to it). */
  tenant(): string | null;
  /** The control secret, `Config.controlSecret` (null: no key can be unsealed). */
  controlSecret: string | null;
  /** The deployment's default upstream (`UPSTREAM_BASE_URL`), the one the tenant's key is for. */
  defaultBaseUrl: string;
  /** The session's redactor: learns the key before it is used. */
  redactor: SecretRedactor;
  /** Whether the session has a control plane to ask (`TENANTS`). */
  controlPlane: boolean;
  /** Syncs with the tenant (tenant-gate.ts `flush`; its reply calls `learn`). */
  sync(): Promise<void>;
}

/** The tenant's own upstream key, as one session knows it. */
export class TenantUpstreamKey {
  private readonly deps: TenantUpstreamKeyDeps;
  private sealed: string | null = null;
  private key: string | null = null;
  /** The sealed value could not be opened (another control secret, another tenant's value). */
  private unreadable = false;
  /** When the tenant's Durable Object last gave the sealed value (ms), or -Infinity. */
  private confirmedAt = Number.NEGATIVE_INFINITY;
  /** A Worker snapshot said the tenant has a key this session has not read yet. */
  private wanted = false;
  private readonly listeners: (() => void)[] = [];
  /** The clock the bound is measured by (tests move it forward instead of waiting). */
  now: () => number = Date.now;

  constructor(deps: TenantUpstreamKeyDeps) {
    this.deps = deps;
  }

  /** Calls `listener` whenever the key changes (set, replaced or removed). */
  onChange(listener: () => void): void {
    this.listeners.push(listener);
  }

  /** A Worker snapshot's `ownUpstreamKey` (≤ the key cache's bound old). */
  observe(ownUpstreamKey: boolean): void {
    if (ownUpstreamKey) {
      if (this.sealed === null) this.wanted = true;
      return;
    }
    this.wanted = false;
    this.set(null, null, false);
  }

  /** The sealed value a sync read from the tenant (null: none). */
  async learn(sealed: string | null): Promise<void> {
    const at = this.now();
    this.wanted = false;
    if (sealed !== this.sealed) {
      const key = sealed === null ? null : await this.unseal(sealed);
      this.set(sealed, key, sealed !== null && key === null);
    }
    this.confirmedAt = at;
  }

  /**
   * Null when the key in hand may be used now (the warm path: no await, no query); else a sync
   * first.
   * @throws {ApiError} 503 when the tenant has a key this session cannot confirm or unseal.
   */
  ready(): Promise<void> | null {
    if (!this.stale()) return this.unreadable ? Promise.reject(unavailable()) : null;
    return this.deps.sync().then(() => {
      if (this.stale() || this.unreadable) throw unavailable();
    });
  }

  /** The bearer token `route` carries now: the tenant's key on the default upstream, else its own. */
  keyFor(route: UpstreamRoute): string | null {
    return this.key !== null && route.baseUrl === this.deps.defaultBaseUrl ? this.key : route.apiKey;
  }

  /** Whether the session must ask its tenant before the next turn. */
  private stale(): boolean {
    if (!this.deps.controlPlane) return false;
    if (this.wanted) return true;
    return this.sealed !== null && this.now() - this.confirmedAt >= UPSTREAM_KEY_TTL_MS;
  }

  private set(sealed: string | null, key: string | null, unreadable: boolean): void {
    const changed = key !== this.key;
    this.sealed = sealed;
    this.key = key;
    this.unreadable = unreadable;
    if (key !== null) this.deps.redactor.add([key]);
    if (changed) for (const listener of this.listeners) listener();
  }

  private async unseal(sealed: string): Promise<string | null> {
    const tenant = this.deps.tenant();
    const keys = controlKeys(this.deps.controlSecret);
    if (!tenant || !keys) return null;
    try {
      return await openUpstreamKey(await keys, tenant, sealed);
    } catch {
      return null; // never saying more: `ready` fails the turn
    }
  }
}

/** 503: the tenant brought its own upstream key and this session cannot use it right now. */
function unavailable(): ApiError {
  return new ApiError(503, {
    type: "server_error",
    code: "upstream_key_unavailable",
    message:
      "The tenant's own upstream key could not be read from the control plane; the request was not sent. Try again.",
    param: null,
  });
}
