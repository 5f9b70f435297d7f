/**
 * How much a tenant's Durable Object lets one session admit without asking again (a lease), for
 * one counted limit: turns or request bytes of the current minute, or tokens of the current UTC
 * day. Owns the sizing rule and the invariant the limits' bounds rest on (docs/tenancy.md
 * "Limits under concurrency"):
 *   used + Σ every session's holding ≤ limit
 * where `used` is what the tenant counted already (turns and bytes admitted and reported this
 * minute; the ledger's tokens today) and a session's holding is its allowance plus, for tokens,
 * its unsettled reservations. A session admits only out of its allowance, so what is admitted
 * never passes the limit; the one exception is a request larger than the whole byte limit, which
 * gets the minute only while nothing at all is counted or held in it.
 * A grant never takes an allowance back (the session may be spending it while the reply travels):
 * an allowance shrinks only by use or by expiring (`LEASE_TTL_MS`, the minute's or day's end).
 */

/** Ms a lease lives after the sync that granted or renewed it (the session renews while it holds reservations). */
export const LEASE_TTL_MS = 30_000;

/** One limit's figures at the tenant when a session syncs. */
export interface LeaseBudget {
  limit: number;
  /** Counted already: admitted and reported this minute (turns, bytes), or the ledger today (tokens). */
  used: number;
  /** Held by the other sessions' unexpired leases. */
  others: number;
  /** Held by this session besides its allowance: its unsettled token reservations (0 otherwise). */
  reserved: number;
  /** This session's allowance when it sent the sync (it may be spending it meanwhile). */
  allowance: number;
  /** What this session's admissions waiting for this sync need together (0: none waits). */
  want: number;
  /** What this session admitted since its previous sync (its pace). */
  recent: number;
}

/**
 * The session's new allowance: never less than the one it holds; what it holds plus what waits
 * when the limit has room for both (what waits does not fit in what it holds, and the session may
 * spend what it holds on other calls while the reply travels), plus headroom for the calls to
 * come: as much as it admitted since its previous sync (its pace), at most half of the rest split
 * evenly over the `sessions` holding leases, this one included (but `unit` when the rest has it).
 * So a session that keeps admitting need not ask on every call, a session that admitted nothing
 * yet (a fresh HTTP chain) gets just what it waits for, and a crowd of sessions cannot hold it all.
 * @param oversize a request larger than the whole limit may have an empty window (request bytes).
 */
export function leaseAllowance(
  budget: LeaseBudget,
  sessions: number,
  unit: number,
  oversize = false,
): number {
  const { limit, used, others, reserved, allowance, want, recent } = budget;
  const held = Math.max(0, allowance);
  const available = limit - used - others - reserved;
  const asked = held + want;
  if (asked > available) {
    const empty = used + others + reserved + held === 0;
    if (oversize && want > limit && empty) return want;
    return Math.max(held, available);
  }
  const rest = available - asked;
  let share = Math.floor(rest / (2 * Math.max(1, sessions)));
  if (rest >= unit) share = Math.max(share, unit);
  return asked + Math.min(share, Math.max(0, recent));
}
