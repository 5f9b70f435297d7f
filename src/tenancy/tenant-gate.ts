/**
 * A session Durable Object's view of its tenant: the limits it enforces on every turn, the
 * tenant's settings it applies, and the usage it reports. Owns the per-turn admission check and
 * the sync with the tenant's Durable Object (tenant-do.ts), which is never on a turn's path:
 * - `admit` (synchronous, before a turn is queued or run): allowed models, model aliases,
 *   `turns_per_minute`, `request_bytes_per_minute`, `tokens_per_day`, against the tenant-wide
 *   counts of the last sync plus what this session admitted or used since;
 * - `finished`: the turn's usage into the outbox (usage-outbox.ts), in the turn's own commit;
 * - `flush`: one RPC to the tenant — the outbox batch and the turns admitted since the last one
 *   in, the tenant-wide counts, limits, settings, revoked keys and the sealed upstream key out —
 *   `SYNC_MS` after activity, from the alarm (no loss on eviction), and before a turn whose
 *   tenant upstream key is older than its bound (tenant-upstream-key.ts).
 * Approximation, documented in docs/tenancy.md "Limits": another session's turns reach this view within
 * `SYNC_MS` plus the round trip, so a tenant spread over n busy sessions can exceed a per-minute
 * limit by what those sessions admit in that time; a session that just woke admits its first
 * turn before its first sync. Token usage is counted exactly (the ledger), and enforced as a soft
 * cap: a turn is admitted while the day's total is below the budget and always finishes.
 */
import { ApiError } from "../protocol/errors.ts";
import type { PolicyOverride } from "../safety/policy.ts";
import { dayOf, minuteOf, secondsToNextDay, secondsToNextMinute } from "./clock.ts";
import { limitReached } from "./limit-errors.ts";
import type { Tenant, TenantLimits, TenantSettings } from "./tenant.ts";
import type { SyncReply, SyncReport, TenantDurableObject } from "./tenant-do.ts";
import type { Admitted } from "./tenant-store.ts";
import type { UsageOutbox } from "./usage-outbox.ts";

/** Ms after a turn is admitted or finished before the session syncs with its tenant. */
export const SYNC_MS = 1_000;

/** What a turn reports when it ends. */
export interface FinishedTurn {
  /** The id its start was opened under in the outbox (usage-outbox.ts `open`), if it was. */
  id?: string;
  keyId: string;
  model: string;
  status: string;
  inputTokens: number;
  outputTokens: number;
}

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

/** One session's view of its tenant. */
export class TenantGate {
  private readonly deps: TenantGateDeps;
  /** The deployment's own safety overrides (`SAFETY_TENANTS`), restored when a tenant sets none. */
  private readonly envSafety: ReadonlyMap<string, PolicyOverride>;
  private limits: TenantLimits | null = null;
  private settings: TenantSettings = {};
  /** Tenant-wide counts as of the last sync. */
  private view: Omit<SyncReply, "applied" | "limits" | "settings" | "revoked" | "upstreamKey"> | null = null;
  /** Admitted here and not yet sent / being sent, by minute. */
  private pending = new Map<number, Counts>();
  private sending = new Map<number, Counts>();
  /** Tokens of turns finished here not yet in the view, by day. */
  private tokensPending = new Map<string, number>();
  private tokensSending = new Map<string, number>();
  private timer: ReturnType<typeof setTimeout> | null = null;
  private flushing: Promise<void> | null = null;
  /** Syncs made (tests: a warm turn makes none on its path). */
  syncs = 0;

  constructor(deps: TenantGateDeps) {
    this.deps = deps;
    this.envSafety = new Map(deps.safetyOverrides);
  }

  /** Takes the Worker's snapshot of the tenant (fresh from its key cache) until the next sync. */
  observe(tenant: Tenant): void {
    this.apply(tenant.id, tenant.limits, tenant.settings);
  }

  /**
   * Whether the gate must sync before it can admit exactly enough: it has no tenant-wide counts
   * yet and the tenant has a limit that counts (turns, bytes, tokens).
   */
  needsView(): boolean {
    const limits = this.limits;
    if (this.view !== null || !this.deps.tenants || !limits) return false;
    return (
      limits.turns_per_minute !== null ||
      limits.request_bytes_per_minute !== null ||
      limits.tokens_per_day !== null
    );
  }

  /**
   * Admits a turn of `model` whose request is `bytes` long, or returns why not. On admission the
   * model may be rewritten by the tenant's aliases (returned as `model`). Called only by the
   * session's one admission (src/session/admission.ts; test/unit/architecture.test.ts).
   * @param _estimatedTokens the turn's input estimate (admission.ts `estimateTokens`), for a
   *   reservation against `tokens_per_day`.
   */
  admit(model: string, bytes: number, _estimatedTokens: number): { error: ApiError } | { model: string } {
    const allowed = this.resolveModel(model);
    if ("error" in allowed) return allowed;
    const resolved = allowed.model;
    const limits = this.limits;
    const now = this.deps.now();
    if (limits) {
      const minute = minuteOf(now);
      const seen = this.minuteCounts(minute);
      if (limits.turns_per_minute !== null && seen.turns >= limits.turns_per_minute) {
        return { error: limitReached("turns_per_minute", limits.turns_per_minute, secondsToNextMinute(now)) };
      }
      const byteLimit = limits.request_bytes_per_minute;
      if (byteLimit !== null && seen.bytes > 0 && seen.bytes + bytes > byteLimit) {
        return { error: limitReached("request_bytes_per_minute", byteLimit, secondsToNextMinute(now)) };
      }
      const tokenLimit = limits.tokens_per_day;
      if (tokenLimit !== null && this.tokensToday(dayOf(now)) >= tokenLimit) {
        return { error: limitReached("tokens_per_day", tokenLimit, secondsToNextDay(now)) };
      }
    }
    const counts = this.pending.get(minuteOf(now)) ?? { turns: 0, bytes: 0 };
    counts.turns++;
    counts.bytes += bytes;
    this.pending.set(minuteOf(now), counts);
    // A session that just woke has no tenant-wide counts yet: it asks at once, not in SYNC_MS.
    if (this.view === null && this.deps.tenants) this.deps.track(this.flush());
    else this.schedule();
    return { model: resolved };
  }

  /**
   * The tenant's allowed models and aliases alone, for a call that counts against no limit
   * (`input_tokens`): the model sent on (an alias resolved), or the 404 of a model not allowed.
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

  /** Records a finished turn in the outbox (synchronously: the same commit as its terminal state). */
  finished(turn: FinishedTurn): void {
    const now = this.deps.now();
    const day = dayOf(now);
    const { id, ...entry } = turn;
    if (id === undefined) this.deps.outbox.add({ day, ...entry }, now);
    else this.deps.outbox.close(id, { day, ...entry }, now);
    this.tokensPending.set(day, (this.tokensPending.get(day) ?? 0) + turn.inputTokens + turn.outputTokens);
    this.schedule();
  }

  /**
   * Syncs with the tenant: sends the outbox batch and the admitted counts, takes the tenant-wide
   * view. One at a time; a failure keeps everything for the next attempt.
   */
  flush(): Promise<void> {
    this.flushing ??= this.sync().finally(() => {
      this.flushing = null;
    });
    return this.flushing;
  }

  private async sync(): Promise<void> {
    this.clearTimer();
    const tenant = this.deps.tenant();
    const tenants = this.deps.tenants;
    if (!tenant || !tenants) return;
    this.sending = this.pending;
    this.pending = new Map();
    this.tokensSending = this.tokensPending;
    this.tokensPending = new Map();
    const entries = this.deps.outbox.batch();
    const report: SyncReport = {
      source: this.deps.source,
      entries,
      admitted: [...this.sending].map(([minute, counts]): Admitted => ({ minute, ...counts })),
      keyIds: this.deps.keyIds(),
    };
    let reply: SyncReply;
    try {
      this.syncs++;
      reply = (await tenants.getByName(tenant).sync(report)) as SyncReply;
    } catch {
      merge(this.pending, this.sending);
      for (const [day, tokens] of this.tokensSending) {
        this.tokensPending.set(day, (this.tokensPending.get(day) ?? 0) + tokens);
      }
      this.sending = new Map();
      this.tokensSending = new Map();
      return; // the alarm retries (session-do.ts)
    }
    this.deps.outbox.ack(reply.applied);
    this.sending = new Map();
    this.tokensSending = new Map();
    const { applied: _a, limits, settings, revoked, upstreamKey, ...view } = reply;
    this.view = view;
    if (limits) this.apply(tenant, limits, settings);
    if (revoked.length > 0) this.deps.onRevoked(revoked);
    await this.deps.onUpstreamKey(upstreamKey);
    if (this.deps.outbox.oldestAt() !== null && entries.length > 0) this.schedule();
  }

  /** When the alarm must flush at the latest (the outbox's oldest row plus a minute), or null. */
  deadline(): number | null {
    const oldest = this.deps.outbox.oldestAt();
    return oldest === null ? null : oldest + 60_000;
  }

  private apply(tenant: string, limits: TenantLimits, settings: TenantSettings): void {
    this.limits = limits;
    this.settings = settings;
    const envPolicy = this.envSafety.get(tenant);
    if (settings.safety) this.deps.safetyOverrides.set(tenant, settings.safety);
    else if (envPolicy) this.deps.safetyOverrides.set(tenant, envPolicy);
    else this.deps.safetyOverrides.delete(tenant);
  }

  /** Turns and bytes of `minute`: tenant-wide as of the last sync, plus this session's since. */
  private minuteCounts(minute: number): Counts {
    const turns =
      (this.view?.minute === minute ? this.view.turnsThisMinute : 0) +
      (this.pending.get(minute)?.turns ?? 0) +
      (this.sending.get(minute)?.turns ?? 0);
    const bytes =
      (this.view?.minute === minute ? this.view.bytesThisMinute : 0) +
      (this.pending.get(minute)?.bytes ?? 0) +
      (this.sending.get(minute)?.bytes ?? 0);
    return { turns, bytes };
  }

  private tokensToday(day: string): number {
    return (
      (this.view?.day === day ? this.view.tokensToday : 0) +
      (this.tokensPending.get(day) ?? 0) +
      (this.tokensSending.get(day) ?? 0)
    );
  }

  private schedule(): void {
    if (this.timer || !this.deps.tenants) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.deps.track(this.flush());
    }, SYNC_MS);
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
