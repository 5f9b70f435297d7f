/**
 * A session Durable Object's view of its tenant: the limits it enforces on every turn, the
 * tenant's settings it applies, and the usage it reports. Owns the per-turn admission and the
 * sync with the tenant's Durable Object (tenant-do.ts):
 * - `admit` (called only by the session's one admission, src/session/admission.ts): allowed
 *   models, model aliases, then the counted limits — `turns_per_minute`,
 *   `request_bytes_per_minute`, `tokens_per_day` — out of the lease the tenant granted this
 *   session (lease-policy.ts): a call the lease covers is admitted synchronously, with no call to
 *   the tenant (the warm path); otherwise the verdict is a Promise that waits for one sync asking
 *   for what it needs (a cold session, a lease spent, expired or of a past minute);
 * - a call's tokens are reserved at admission (token-reservation.ts) and settled by `finished` to
 *   its real usage, which goes to the outbox (usage-outbox.ts) in the call's own commit;
 * - `flush`: one RPC to the tenant — the outbox batch, the turns admitted since the last one, what
 *   this session holds and wants in; its renewed lease, the limits, settings, revoked keys and the
 *   sealed upstream key out — `SYNC_MS` after activity, every `LEASE_TTL_MS / 2` while a
 *   reservation is unsettled, from the alarm (no loss on eviction), on an admission that waits,
 *   and before a turn whose tenant upstream key is older than its bound (tenant-upstream-key.ts).
 * Invariant (the bounds, docs/tenancy.md "Limits under concurrency"): the tenant counts what every
 * session holds, so the turns and bytes admitted in a minute never pass the limit (a request
 * larger than the whole byte limit only into a minute with nothing else), whatever the number of
 * sessions; a day's tokens pass `tokens_per_day` only by what calls used beyond their reservation.
 * The tenant unreachable, an admission the lease does not cover fails closed (503
 * `tenant_limits_unavailable`).
 */
import type { TurnReservation } from "../engine/turn-engine.ts";
import { ApiError } from "../protocol/errors.ts";
import type { PolicyOverride } from "../safety/policy.ts";
import { dayOf, minuteOf, secondsToNextDay, secondsToNextMinute } from "./clock.ts";
import { LEASE_TTL_MS } from "./lease-policy.ts";
import { limitReached, limitsUnavailable } from "./limit-errors.ts";
import { NO_LIMITS, type Tenant, type TenantLimits, type TenantSettings } from "./tenant.ts";
import type { SyncReply, SyncReport, TenantDurableObject } from "./tenant-do.ts";
import type { Admitted } from "./tenant-store.ts";
import { OUTBOX_BATCH, type UsageOutbox } from "./usage-outbox.ts";

/** Ms after a turn is admitted or finished before the session syncs with its tenant. */
export const SYNC_MS = 1_000;

/** What a turn reports when it ends. */
export interface FinishedTurn {
  /** The id its start was opened under in the outbox (usage-outbox.ts `open`), if it was. */
  id?: string;
  keyId: string;
  model: string;
  status: string;
  /** All input tokens, cached and cache-write ones included (src/context/turn-cost.ts). */
  inputTokens: number;
  cachedTokens: number;
  cacheWriteTokens: number;
  outputTokens: number;
  /** Its cost in nano-dollars (`PRICES`); null when its model has no price. */
  costNanoUsd: number | null;
  /** What its admission reserved (settled here to the real usage). */
  reservation?: TurnReservation | undefined;
}

/**
 * An admission: the error to report, or the model to send (aliases applied; null when the call
 * named none) and what it reserved of `tokens_per_day` (null: nothing to settle).
 */
export type Verdict = { error: ApiError } | { model: string | null; reservation: TurnReservation | null };

/** Collaborators of the gate. */
export interface TenantGateDeps {
  tenants: DurableObjectNamespace<TenantDurableObject> | undefined;
  /** This session Durable Object's id (the tenant applies each source's outbox once). */
  source: string;
  /** The session's tenant (null before its first request). */
  tenant(): string | null;
  /** Key ids of the session's open sockets. */
  keyIds(): string[];
  outbox: UsageOutbox;
  /** Safety overrides by tenant (the `SessionSafety` settings' map): the tenant's policy goes here. */
  safetyOverrides: Map<string, PolicyOverride>;
  /** Sockets of these keys are closed (their key was revoked). */
  onRevoked(keyIds: string[]): void;
  /** The tenant's own upstream key as each sync read it, sealed (tenant-upstream-key.ts). */
  onUpstreamKey(sealed: string | null): Promise<void>;
  /** Keeps a background sync alive (`ctx.waitUntil`). */
  track(promise: Promise<unknown>): void;
  now(): number;
}

interface Counts {
  turns: number;
  bytes: number;
}

/** Turns, request bytes and tokens: what a turn needs, what a lease allows. */
interface Amounts {
  turns: number;
  bytes: number;
  tokens: number;
}

/** The allowances the tenant granted, for `minute` (turns, bytes) and `day` (tokens), until `expiresAt`. */
interface Lease extends Amounts {
  minute: number;
  day: string;
  expiresAt: number;
}

const NOTHING: Amounts = { turns: 0, bytes: 0, tokens: 0 };

/** One session's view of its tenant. */
export class TenantGate {
  private readonly deps: TenantGateDeps;
  /** The deployment's own safety overrides (`SAFETY_TENANTS`), restored when a tenant sets none. */
  private readonly envSafety: ReadonlyMap<string, PolicyOverride>;
  private limits: TenantLimits | null = null;
  private settings: TenantSettings = {};
  /** A snapshot or a sync's reply told this session its tenant's limits and settings. */
  private viewed = false;
  /** What this session may still admit without asking (expired: holds nothing). */
  private lease: Lease = { ...NOTHING, minute: -1, day: "", expiresAt: 0 };
  /** Reservations of turns admitted here and not finished yet. */
  private readonly reservations = new Set<TurnReservation>();
  /** What the admissions waiting for the next sync need together. */
  private want: Amounts = { ...NOTHING };
  /** Tokens reserved since the last sync was sent (its pace; turns and bytes: `pending`). */
  private reservedSince = 0;
  /** False after a sync failed (until one succeeds): an admission that waited fails closed. */
  private reachable = true;
  /** Admitted here and not yet sent / being sent, by minute. */
  private pending = new Map<number, Counts>();
  private sending = new Map<number, Counts>();
  private timer: ReturnType<typeof setTimeout> | null = null;
  private timerDue = 0;
  private flushing: Promise<void> | null = null;
  private following: Promise<void> | null = null;
  /** Syncs made (tests). */
  syncs = 0;
  /** Admissions that waited for a sync (tests: a warm turn waits for none). */
  waits = 0;

  constructor(deps: TenantGateDeps) {
    this.deps = deps;
    this.envSafety = new Map(deps.safetyOverrides);
  }

  /** Takes the Worker's snapshot of the tenant (fresh from its key cache) until the next sync. */
  observe(tenant: Tenant): void {
    this.apply(tenant.id, tenant.limits, tenant.settings);
  }

  /**
   * Whether this session knows its tenant's models and limits (a Worker snapshot or a sync told
   * it; always with no control plane to ask): a call admitted without a snapshot in a session
   * that does not — woken from hibernation, or reached only by calls that carry none — syncs
   * first (src/session/admission.ts).
   */
  knowsTenant(): boolean {
    return this.viewed || !this.deps.tenants;
  }

  /**
   * Admits a call of `model` (null: it names none, as an `input_tokens` request may) whose request
   * is `bytes` long, or returns why not. Called only by the session's one admission
   * (src/session/admission.ts; test/unit/architecture.test.ts). Synchronous when the tenant has no
   * counted limit or this session's lease covers the call; a Promise when it must ask the tenant
   * first. On admission the model may be rewritten by the tenant's aliases, and the call holds its
   * reservation until `finished` (or `release`).
   * @param estimate the tokens the call may use (token-reservation.ts), asked only when the tenant
   *   has `tokens_per_day` (0: a call that generates nothing reserves nothing).
   */
  admit(model: string | null, bytes: number, estimate: () => number): Verdict | Promise<Verdict> {
    let resolved: string | null = null;
    if (model !== null) {
      const allowed = this.resolveModel(model);
      if ("error" in allowed) return allowed;
      resolved = allowed.model;
    }
    const limits = this.limits;
    if (!limits || !this.counted()) {
      this.count(bytes);
      return { model: resolved, reservation: null };
    }
    const need: Amounts = {
      turns: limits.turns_per_minute === null ? 0 : 1,
      bytes: limits.request_bytes_per_minute === null ? 0 : bytes,
      // A call whose bound exceeds the whole budget reserves all of it: it runs into an untouched day.
      tokens: limits.tokens_per_day === null ? 0 : Math.min(Math.max(0, estimate()), limits.tokens_per_day),
    };
    return this.take(resolved, bytes, need) ?? this.wait(resolved, bytes, need);
  }

  /**
   * The tenant's allowed models and aliases: the model sent on (an alias resolved), or the 404 of a
   * model not allowed.
   */
  resolveModel(model: string): { error: ApiError } | { model: string } {
    const { settings } = this;
    const resolved = settings.model_aliases?.[model] ?? model;
    if (settings.models && !settings.models.includes(model) && !settings.models.includes(resolved)) {
      return {
        error: new ApiError(404, {
          type: "invalid_request_error",
          code: "model_not_found",
          message: `The model \`${model}\` does not exist or you do not have access to it.`,
          param: "model",
        }),
      };
    }
    return { model: resolved };
  }

  /**
   * Records a finished call in the outbox and settles its reservation, in one synchronous step
   * (the same commit as its terminal state): what it used moves from its holding to the ledger.
   */
  finished(turn: FinishedTurn): void {
    const now = this.deps.now();
    const day = dayOf(now);
    const { id, reservation, ...entry } = turn;
    if (id === undefined) this.deps.outbox.add({ day, ...entry }, now);
    else this.deps.outbox.close(id, { day, ...entry }, now);
    this.settle(reservation, turn.inputTokens + turn.outputTokens);
    this.schedule(SYNC_MS);
  }

  /** A call admitted and never run (or ended without `finished`): its reservation goes back to the lease. */
  release(reservation: TurnReservation | undefined): void {
    this.settle(reservation, 0);
  }

  /**
   * Syncs with the tenant: sends the outbox batch, the admitted counts and the lease, takes the
   * renewed lease, limits and settings. One at a time; a failure keeps the usage for the next
   * attempt.
   */
  flush(): Promise<void> {
    this.flushing ??= this.sync().finally(() => {
      this.flushing = null;
    });
    return this.flushing;
  }

  /** A sync that starts after this call (the one in flight may have been sized without it). */
  private nextSync(): Promise<void> {
    if (!this.flushing) return this.flush();
    const again = () => {
      this.following = null;
      return this.flush();
    };
    this.following ??= this.flushing.then(again, again);
    return this.following;
  }

  private async sync(): Promise<void> {
    this.clearTimer();
    const tenant = this.deps.tenant();
    const tenants = this.deps.tenants;
    if (!tenant || !tenants) return;
    this.sending = this.pending;
    this.pending = new Map();
    const entries = this.deps.outbox.batch();
    const now = this.deps.now();
    const sent = { ...this.lease };
    const want = this.want;
    this.want = { ...NOTHING };
    const report: SyncReport = {
      source: this.deps.source,
      entries,
      admitted: [...this.sending].map(([minute, counts]): Admitted => ({ minute, ...counts })),
      keyIds: this.deps.keyIds(),
    };
    if (this.counted()) {
      const held = this.held(now) ?? NOTHING;
      const last = entries.at(-1);
      // Finished turns' tokens the tenant does not get in this batch: still this session's.
      const later = last && entries.length === OUTBOX_BATCH ? this.deps.outbox.tokensAfter(last.seq) : 0;
      let reserved = later;
      for (const reservation of this.reservations) reserved += reservation.tokens;
      const recent = { turns: 0, bytes: 0, tokens: this.reservedSince };
      for (const counts of this.sending.values()) {
        recent.turns += counts.turns;
        recent.bytes += counts.bytes;
      }
      report.lease = {
        minute: minuteOf(now),
        day: dayOf(now),
        turns: Math.max(0, held.turns),
        bytes: Math.max(0, held.bytes),
        tokens: Math.max(0, held.tokens),
        reserved,
        want,
        recent,
      };
    }
    this.reservedSince = 0;
    let reply: SyncReply;
    try {
      this.syncs++;
      reply = (await tenants.getByName(tenant).sync(report)) as SyncReply;
    } catch {
      merge(this.pending, this.sending);
      this.sending = new Map();
      this.reachable = false;
      return; // the alarm retries (session-do.ts); an admission that waited fails closed
    }
    this.reachable = true;
    this.viewed = true;
    this.deps.outbox.ack(reply.applied);
    this.sending = new Map();
    this.renew(reply, report, sent, now);
    const { limits, settings, revoked, upstreamKey } = reply;
    if (limits) this.apply(tenant, limits, settings);
    if (revoked.length > 0) this.deps.onRevoked(revoked);
    await this.deps.onUpstreamKey(upstreamKey);
    if (this.deps.outbox.oldestAt() !== null && entries.length > 0) this.schedule(SYNC_MS);
    if (this.reservations.size > 0) this.schedule(LEASE_TTL_MS / 2); // keeps them held
  }

  /**
   * The lease of a sync's reply, plus what changed here while it travelled (turns admitted,
   * reservations made or settled): the tenant sized it on what the report said.
   */
  private renew(reply: SyncReply, report: SyncReport, sent: Lease, sentAt: number): void {
    const grant = reply.lease;
    if (!grant) {
      this.lease = { ...this.lease, expiresAt: 0 };
      return;
    }
    const sameMinute = grant.minute === report.lease?.minute;
    const sameDay = grant.day === report.lease?.day;
    const now = this.lease;
    this.lease = {
      minute: grant.minute,
      day: grant.day,
      expiresAt: sentAt + LEASE_TTL_MS,
      turns: grant.turns + (sameMinute ? now.turns - sent.turns : 0),
      bytes: grant.bytes + (sameMinute ? now.bytes - sent.bytes : 0),
      tokens: grant.tokens + (sameDay ? now.tokens - sent.tokens : 0),
    };
  }

  /** When the alarm must flush at the latest (the outbox's oldest row plus a minute), or null. */
  deadline(): number | null {
    const oldest = this.deps.outbox.oldestAt();
    return oldest === null ? null : oldest + 60_000;
  }

  private apply(tenant: string, limits: TenantLimits, settings: TenantSettings): void {
    this.viewed = true;
    this.limits = limits;
    this.settings = settings;
    const envPolicy = this.envSafety.get(tenant);
    if (settings.safety) this.deps.safetyOverrides.set(tenant, settings.safety);
    else if (envPolicy) this.deps.safetyOverrides.set(tenant, envPolicy);
    else this.deps.safetyOverrides.delete(tenant);
  }

  /** Whether the tenant has a limit that counts (turns, bytes, tokens) and a control plane to lease it. */
  private counted(): boolean {
    const limits = this.limits;
    if (!limits || !this.deps.tenants) return false;
    return (
      limits.turns_per_minute !== null ||
      limits.request_bytes_per_minute !== null ||
      limits.tokens_per_day !== null
    );
  }

  /** The lease's allowances usable now (none past the minute or day they are of), or null when expired. */
  private held(now: number): Amounts | null {
    const lease = this.lease;
    if (now >= lease.expiresAt) return null;
    const sameMinute = lease.minute === minuteOf(now);
    return {
      turns: sameMinute ? lease.turns : 0,
      bytes: sameMinute ? lease.bytes : 0,
      tokens: lease.day === dayOf(now) ? lease.tokens : 0,
    };
  }

  /**
   * Admits out of the lease, or null when it does not cover `need` (a limit the call needs none
   * of, as `tokens_per_day` for `input_tokens`, needs no lease).
   */
  private take(model: string | null, bytes: number, need: Amounts): Verdict | null {
    const held = this.held(this.deps.now()) ?? NOTHING;
    const short = (key: keyof Amounts) => need[key] > 0 && held[key] < need[key];
    if (short("turns") || short("bytes") || short("tokens")) return null;
    this.lease.turns -= need.turns;
    this.lease.bytes -= need.bytes;
    this.lease.tokens -= need.tokens;
    let reservation: TurnReservation | null = null;
    if (need.tokens > 0) {
      reservation = { tokens: need.tokens };
      this.reservations.add(reservation);
      this.reservedSince += need.tokens;
    }
    this.count(bytes);
    return { model, reservation };
  }

  /** Waits for a sync that asks for `need` too, then admits out of the renewed lease or refuses. */
  private async wait(model: string | null, bytes: number, need: Amounts): Promise<Verdict> {
    this.waits++;
    this.want = {
      turns: this.want.turns + need.turns,
      bytes: this.want.bytes + need.bytes,
      tokens: this.want.tokens + need.tokens,
    };
    await this.nextSync().catch(() => {}); // a sync that failed after its reply: the lease decides
    const taken = this.take(model, bytes, need);
    if (taken) return taken;
    if (!this.reachable) return { error: limitsUnavailable() };
    return { error: this.refusal(need) };
  }

  /** The limit a turn the renewed lease does not cover is refused by. */
  private refusal(need: Amounts): ApiError {
    const now = this.deps.now();
    const held = this.held(now) ?? NOTHING;
    const {
      turns_per_minute: turns,
      request_bytes_per_minute: bytes,
      tokens_per_day: tokens,
    } = this.limits ?? NO_LIMITS;
    if (bytes !== null && held.bytes < need.bytes && (turns === null || held.turns >= need.turns)) {
      return limitReached("request_bytes_per_minute", bytes, secondsToNextMinute(now));
    }
    if (tokens !== null && held.tokens < need.tokens && (turns === null || held.turns >= need.turns)) {
      return limitReached("tokens_per_day", tokens, secondsToNextDay(now));
    }
    return limitReached("turns_per_minute", turns ?? 0, secondsToNextMinute(now));
  }

  /** A turn admitted: counted in its minute for the tenant (reported at the next sync). */
  private count(bytes: number): void {
    const minute = minuteOf(this.deps.now());
    const counts = this.pending.get(minute) ?? { turns: 0, bytes: 0 };
    counts.turns++;
    counts.bytes += bytes;
    this.pending.set(minute, counts);
    this.schedule(SYNC_MS);
  }

  /** A reservation ends: the lease gets back what the turn did not use (or owes what it used beyond). */
  private settle(reservation: TurnReservation | undefined, used: number): void {
    if (!reservation || !this.reservations.delete(reservation)) return;
    this.lease.tokens += reservation.tokens - used;
  }

  /** A sync in `ms` at the latest. */
  private schedule(ms: number): void {
    if (!this.deps.tenants) return;
    const due = this.deps.now() + ms;
    if (this.timer) {
      if (this.timerDue <= due) return;
      clearTimeout(this.timer);
    }
    this.timerDue = due;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.deps.track(this.flush());
    }, ms);
  }

  private clearTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }
}

function merge(into: Map<number, Counts>, from: Map<number, Counts>): void {
  for (const [minute, counts] of from) {
    const current = into.get(minute) ?? { turns: 0, bytes: 0 };
    into.set(minute, { turns: current.turns + counts.turns, bytes: current.bytes + counts.bytes });
  }
}
