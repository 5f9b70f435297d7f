/**
 * The one admission of a session Durable Object: every entry point that calls a model or counts
 * against a tenant — HTTP `POST /v1/responses`, a WebSocket `response.create`,
 * `POST /v1/responses/compact`, `POST /v1/responses/input_tokens` — asks `Admission.admit`, and
 * nothing else asks the tenant gate (test/unit/architecture.test.ts). One order:
 * 1. the client secret's binding (src/auth/secret-binding.ts): its session (a parent of another
 *    session is not found), its models, its `max_request_bytes`;
 * 2. the secret's turn count (`max_turns`, src/store/secret-turns.ts) — for a call that counts as a
 *    turn (a create, a compaction), not for `input_tokens`;
 * 3. the tenant gate (src/tenancy/tenant-gate.ts): allowed models and aliases, then
 *    `turns_per_minute` and `request_bytes_per_minute` — every call, `input_tokens` too (each may
 *    reach an upstream) — and `tokens_per_day`, which reserves the call's estimate
 *    (token-reservation.ts; none for `input_tokens`, which generates nothing), all out of the
 *    session's lease (src/tenancy/lease-policy.ts); a turn the gate refuses gives the secret its
 *    counted turn back.
 * It returns the call's scope: the model to send (an alias resolved), the id of the key that made
 * it (a minted key's, `secret:<id>` for a client secret, `env` for a `DELTAGATE_API_KEYS` key),
 * which the usage ledger books the call under, and its reservation, which the call's usage
 * settles when it is booked (src/tenancy/session-tenancy.ts `ended`) and `release` gives back when
 * it never ran.
 * Invariants: a refused call stores nothing and reaches no upstream; the verdict is synchronous
 * when the session's lease covers the call (a warm session: no await, no round trip) and a promise
 * only when the gate must ask the tenant first (a cold session, a lease spent, expired or of a past
 * minute) — callers keep a socket's lane order either way (ws-transport.ts).
 */

import { turnsExhausted } from "../auth/errors.ts";
import { bindingRefusal } from "../auth/secret-binding.ts";
import type { TurnReservation } from "../engine/turn-engine.ts";
import type { ApiError } from "../protocol/errors.ts";
import { countSecretTurn, refundSecretTurn } from "../store/secret-turns.ts";
import { limitsUnavailable } from "../tenancy/limit-errors.ts";
import type { SessionTenancy } from "../tenancy/session-tenancy.ts";
import { ENV_KEY_ID, type Tenant } from "../tenancy/tenant.ts";
import type { TenantGate } from "../tenancy/tenant-gate.ts";
import { turnTokenEstimate } from "../tenancy/token-reservation.ts";
import type { SecretTurnBinding } from "./internal-headers.ts";

/** What an entry point asks admission for. */
export interface AdmissionRequest {
  /**
   * `turn`: a create or a compaction — counted against every limit and a secret's `max_turns`;
   * `count`: `input_tokens` — the binding and the tenant's allowed models and aliases only.
   */
  kind: "turn" | "count";
  /** The model named (null: an `input_tokens` request that names none). */
  model: string | null;
  previousResponseId?: string | null | undefined;
  /** The request's size in UTF-8 bytes (frame or decompressed body). */
  bytes: number;
  /**
   * A turn's output bound for its `tokens_per_day` reservation: its `max_output_tokens`, null or
   * absent when it sets none (token-reservation.ts's default), 0 when it generates nothing (a
   * `generate: false` warm-up).
   */
  maxOutputTokens?: number | null | undefined;
  /** The client secret's binding, when a secret made the call. */
  binding: SecretTurnBinding | null;
  /** The caller's tenant snapshot, when the Worker sent one with the call (HTTP, not a relayed turn). */
  tenant?: Tenant | undefined;
  /** The key that made the call (the snapshot's, or the socket's attachment's); absent: `env`. */
  keyId?: string | undefined;
}

/**
 * An admitted call: the model to send (aliases resolved; null when none was named), its key, and
 * what it reserved of the tenant's `tokens_per_day` (null: nothing).
 */
export interface Admitted {
  model: string | null;
  keyId: string;
  reservation: TurnReservation | null;
  /**
   * Gives the reservation back: for a call that never ran, or in a `finally` after it ended (a
   * reservation its booked usage settled is left alone, tenant-gate.ts).
   */
  release(): void;
}

/** Admitted, or the error to answer instead (nothing stored, nothing sent). */
export type AdmissionVerdict = Admitted | ApiError;

/** What the gate answers, once settled. */
type GateVerdict = Awaited<ReturnType<TenantGate["admit"]>>;

/**
 * The input-token estimate of a request's own bytes (part of a turn's reservation against
 * `tokens_per_day`, with its history and output bound: `Admission.estimate`): a quarter of its
 * bytes — OpenAI's rule of thumb of about 4 characters a token, which overstates a JSON request
 * (field names, ids) rather than understating it.
 * Source: https://help.openai.com/en/articles/4936856-what-are-tokens-and-how-to-count-them
 */
export function estimateTokens(bytes: number): number {
  return Math.ceil(bytes / 4);
}

/** Collaborators of the admission. */
export interface AdmissionDeps {
  sql: SqlStorage;
  tenancy: SessionTenancy;
  /** The session Durable Object's id (hex): a secret continues only its responses. */
  objectId: string;
  /**
   * Tokens of the history a continuation of `responseId` sends (its recorded input + output
   * tokens; 0 when this session does not know it): asked only for a `tokens_per_day` reservation.
   */
  historyTokens(responseId: string): number;
  now(): number;
}

/** True for a value to wait for. */
function pending<T>(value: T | Promise<T>): value is Promise<T> {
  return typeof (value as { then?: unknown } | null)?.then === "function";
}

/** `then(value)` now when `value` is settled, else once it settles: the warm path never awaits. */
export function whenSettled<T, R>(value: T | Promise<T>, then: (settled: T) => R): R | Promise<Awaited<R>> {
  return pending(value) ? (value.then(then) as Promise<Awaited<R>>) : then(value);
}

/** The one admission of a session. */
export class Admission {
  private readonly deps: AdmissionDeps;

  constructor(deps: AdmissionDeps) {
    this.deps = deps;
  }

  /** Admits a call, or says why not (module header: the order). */
  admit(request: AdmissionRequest): AdmissionVerdict | Promise<AdmissionVerdict> {
    const { binding, model, bytes } = request;
    if (binding) {
      const rule = model === null ? { ...binding, models: null } : binding;
      const turn = { model: model ?? "", previous_response_id: request.previousResponseId };
      const refused = bindingRefusal(rule, turn, bytes, this.deps.objectId);
      if (refused) return refused;
    }
    const maxTurns = request.kind === "turn" ? (binding?.maxTurns ?? null) : null;
    const counted = binding !== null && maxTurns !== null;
    if (counted) {
      const { id, expiresAt } = binding;
      const nowSeconds = Math.floor(this.deps.now() / 1000);
      if (!countSecretTurn(this.deps.sql, { id, maxTurns, expiresAt }, nowSeconds)) {
        return turnsExhausted(maxTurns);
      }
    }
    const keyId = request.keyId ?? request.tenant?.keyId ?? ENV_KEY_ID;
    const { tenancy } = this.deps;
    if (request.tenant) tenancy.observe(request.tenant);
    const settle = (verdict: GateVerdict): AdmissionVerdict => {
      if ("error" in verdict) {
        if (counted) refundSecretTurn(this.deps.sql, binding.id);
        return verdict.error;
      }
      const { reservation } = verdict;
      const release = () => tenancy.release(reservation);
      return { model: verdict.model, keyId, reservation, release };
    };
    // Out of the session's lease: now when it covers the call, else after one sync (tenant-gate.ts).
    const gate = () =>
      whenSettled(
        tenancy.gate.admit(model, bytes, () => this.estimate(request)),
        settle,
      );
    // No snapshot came with the call (a socket's create, or one another session relayed here:
    // conversation-relay.ts) and the session has no view of its tenant yet (woken from
    // hibernation, or reached only by such calls): one sync first, so its models and limits apply.
    // The tenant unreachable, it fails closed (503 `tenant_limits_unavailable`), as the gate does.
    if (request.tenant || tenancy.gate.knowsTenant()) return gate();
    const known = () => (tenancy.gate.knowsTenant() ? gate() : settle({ error: limitsUnavailable() }));
    return tenancy.gate.flush().then(known, known);
  }

  /**
   * The tokens a call may use, reserved against `tokens_per_day` (token-reservation.ts): a turn's
   * input — its history's recorded tokens and its request's own estimate — plus its output bound;
   * nothing for a count (`input_tokens` generates nothing and is booked with no tokens).
   */
  private estimate(request: AdmissionRequest): number {
    if (request.kind === "count") return 0;
    const parent = request.previousResponseId;
    const history = parent ? this.deps.historyTokens(parent) : 0;
    return turnTokenEstimate(history + estimateTokens(request.bytes), request.maxOutputTokens);
  }
}
