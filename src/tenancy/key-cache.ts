/**
 * The Worker's in-isolate cache of resolved keys: key → tenant snapshot (or "revoked") for at most
 * `KEY_CACHE_TTL_MS`, so a warm request needs no control-plane round trip. Owns the revocation
 * bound: an entry older than `KEY_CACHE_REFRESH_MS` is served while a refresh runs in the
 * background; one older than `KEY_CACHE_TTL_MS` (30 s) is never served, so a revoked key stops
 * authenticating within 30 s of its revocation in every isolate.
 * Invariants: at most `KEY_CACHE_MAX` entries (the oldest goes first); only keys that passed their
 * signature check (api-keys.ts) or a `DELTAGATE_API_KEYS` entry are ever looked up or cached, so
 * no request can add an entry for a key that was never issued; entries are keyed by tenant and key
 * id, never by the key itself.
 */
import type { Tenant } from "./tenant.ts";

/** Age after which an entry is refreshed in the background, in ms. */
export const KEY_CACHE_REFRESH_MS = 10_000;
/** Age after which an entry is not used at all: the documented revocation bound, in ms. */
export const KEY_CACHE_TTL_MS = 30_000;
/** Entries per isolate. */
export const KEY_CACHE_MAX = 10_000;

interface Entry {
  tenant: Tenant | null;
  at: number;
  refreshing: Promise<Tenant | null> | null;
}

/** Bounded, time-limited cache of key resolutions. */
export class KeyCache {
  private readonly entries = new Map<string, Entry>();
  /** Lookups that reached the control plane (tests: a warm request makes none). */
  misses = 0;
  /** The clock entries age by (tests move it forward instead of waiting). */
  now: () => number = Date.now;

  /**
   * The tenant of `id` (`tenant/keyId`): from the cache when fresh enough, else from `load`.
   * @param track keeps a background refresh alive past the response (`ctx.waitUntil`).
   */
  async get(
    id: string,
    load: () => Promise<Tenant | null>,
    now: number,
    track: (p: Promise<unknown>) => void,
  ): Promise<Tenant | null> {
    const entry = this.entries.get(id);
    if (entry && now - entry.at < KEY_CACHE_TTL_MS) {
      if (now - entry.at >= KEY_CACHE_REFRESH_MS && !entry.refreshing) {
        entry.refreshing = this.load(id, load, now);
        track(entry.refreshing.catch(() => null));
      }
      return entry.tenant;
    }
    if (entry?.refreshing) return entry.refreshing;
    return this.load(id, load, now);
  }

  private async load(id: string, load: () => Promise<Tenant | null>, now: number): Promise<Tenant | null> {
    this.misses++;
    try {
      const tenant = await load();
      this.set(id, tenant, now);
      return tenant;
    } finally {
      const entry = this.entries.get(id);
      if (entry) entry.refreshing = null;
    }
  }

  private set(id: string, tenant: Tenant | null, now: number): void {
    this.entries.delete(id); // re-inserted last: Map order is the eviction order
    this.entries.set(id, { tenant, at: now, refreshing: null });
    if (this.entries.size > KEY_CACHE_MAX) {
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
  }

  /** Forgets everything (tests). */
  clear(): void {
    this.entries.clear();
    this.misses = 0;
  }
}
