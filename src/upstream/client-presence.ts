/**
 * The session's client sockets as a warm upstream connection sees them, and the keep-warm policy
 * built on it. Owns when a warm upstream socket may be closed for idleness (`idleDeadline`):
 * - while a client socket of the session is open, the upstream socket stays open until the
 *   session has been quiet (no client frame, no turn) for `keepWarmMs` (`UPSTREAM_KEEP_WARM_MS`,
 *   5 minutes), or `idleMs` if longer — a live agent's next turn reuses it, however long its tool
 *   ran;
 * - with no client socket open, it closes `idleMs` (`UPSTREAM_IDLE_MS` or the route's `idle_ms`)
 *   after the later of its last turn and the last client's close — a client that reconnects
 *   within that time still finds it warm;
 * An open outbound socket keeps the session Durable Object in memory (no hibernation, billed as
 * active), so both limits are finite: a quiet session is always released.
 * Invariant: listeners hear of every change of the set of open sockets; opening or closing the same
 * socket twice counts once.
 * Source: https://developers.cloudflare.com/durable-objects/concepts/durable-object-lifecycle/
 */

/** What the policy needs to know about the session's clients. */
export interface PresenceSnapshot {
  /** Client sockets open now. */
  clients: number;
  /** Last client activity (a frame, an accept, a close), ms since the epoch. */
  lastActiveAt: number;
}

/** Idle limits of a warm upstream socket, in ms. */
export interface IdleLimits {
  idleMs: number;
  keepWarmMs: number;
}

/**
 * When a warm upstream socket idle since `lastUseAt` (its last turn, or its opening) may be
 * closed, ms since the epoch.
 */
export function idleDeadline(
  lastUseAt: number,
  limits: IdleLimits,
  presence: PresenceSnapshot | null,
): number {
  if (!presence) return lastUseAt + limits.idleMs;
  const since = Math.max(lastUseAt, presence.lastActiveAt);
  return since + (presence.clients > 0 ? Math.max(limits.idleMs, limits.keepWarmMs) : limits.idleMs);
}

/** The client sockets of one session Durable Object (in memory; rebuilt on wake). */
export class ClientPresence {
  private readonly open: Set<string>;
  private lastActiveAt: number;
  private readonly now: () => number;
  private readonly listeners = new Set<() => void>();

  /**
   * @param open ids of the sockets open at construction (after a wake: the hibernated ones).
   * @param now clock in ms.
   */
  constructor(open: Iterable<string>, now: () => number = Date.now) {
    this.open = new Set(open);
    this.now = now;
    this.lastActiveAt = now();
  }

  /** Client socket `id` was accepted. */
  opened(id: string): void {
    if (this.open.has(id)) return;
    this.open.add(id);
    this.changed();
  }

  /** Client socket `id` closed (or failed). */
  closed(id: string): void {
    if (!this.open.delete(id)) return;
    this.changed();
  }

  /** A client frame arrived. */
  active(): void {
    this.lastActiveAt = this.now();
  }

  /** The current state. */
  snapshot(): PresenceSnapshot {
    return { clients: this.open.size, lastActiveAt: this.lastActiveAt };
  }

  /**
   * Calls `listener` on every open or close.
   * @returns a function that removes it.
   */
  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private changed(): void {
    this.lastActiveAt = this.now();
    for (const listener of this.listeners) listener();
  }
}
