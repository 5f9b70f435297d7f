/**
 * The one admission of a session Durable Object: every entry point that calls a model or counts
 * against a tenant — HTTP `POST /v1/responses`, a WebSocket `response.create`,
 * `POST /v1/responses/compact`, `POST /v1/responses/input_tokens` — asks `Admission.admit`, and
 * nothing else asks the tenant gate (test/unit/architecture.test.ts). One order:
 * 1. the client secret's binding (src/auth/secret-binding.ts): its session (a parent of another
 *    session is not found), its models, its `max_request_bytes`;
 * 2. the secret's turn count (`max_turns`, src/store/secret-turns.ts) — for a call that counts as a
 *    turn (a create, a compaction), not for `input_tokens`;
 * 3. the tenant gate (src/tenancy/tenant-gate.ts): allowed models and aliases, then — for a turn —
 *    `turns_per_minute`, `request_bytes_per_minute`, `tokens_per_day`; a turn the gate refuses
 *    gives the secret its counted turn back.
 * It returns the call's scope: the model to send (an alias resolved) and the id of the key that
 * made it (a minted key's, `secret:<id>` for a client secret, `env` for a `DELTAGATE_API_KEYS`
 * key), which the usage ledger books the call under.
 * Invariants: a refused call stores nothing and reaches no upstream; the verdict is synchronous
 * when nothing is pending (a warm session: no await, no round trip) and a promise only when the
 * gate must ask the tenant first (a cold session, `needsView`) — callers keep a socket's lane order
 * either way (ws-transport.ts).
 */

import { turnsExhausted } from "../auth/errors.ts";
import { bindingRefusal } from "../auth/secret-binding.ts";
import type { ApiError } from "../protocol/errors.ts";
import { countSecretTurn, refundSecretTurn } from "../store/secret-turns.ts";
import type { SessionTenancy } from "../tenancy/session-tenancy.ts";
import { ENV_KEY_ID, type Tenant } from "../tenancy/tenant.ts";
import type { TenantGate } from "../tenancy/tenant-gate.ts";
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
  /** The client secret's binding, when a secret made the call. */
  binding: SecretTurnBinding | null;
  /** The caller's tenant snapshot, when the Worker sent one with the call (HTTP). */
  tenant?: Tenant | undefined;
  /** The key that made the call (the snapshot's, or the socket's attachment's); absent: `env`. */
  keyId?: string | undefined;
}

/** An admitted call: the model to send (aliases resolved; null when none was named) and its key. */
export interface Admitted {
  model: string | null;
  keyId: string;
}

/** Admitted, or the error to answer instead (nothing stored, nothing sent). */
export type AdmissionVerdict = Admitted | ApiError;

/** What the gate answers, once settled. */
type GateVerdict = Awaited<ReturnType<TenantGate["admit"]>>;

/**
 * The input-token estimate a turn is admitted with (a reservation against `tokens_per_day`): a
 * quarter of its request's bytes — OpenAI's rule of thumb of about 4 characters a token, which
 * overstates a JSON request (field names, ids) rather than understating it. Output tokens are not
 * included.
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
      if ("model" in verdict) return { model: model === null ? null : verdict.model, keyId };
      if (counted) refundSecretTurn(this.deps.sql, binding.id);
      return verdict.error;
    };
    // A session with no tenant-wide counts yet asks its tenant first (one round trip, cold only).
    if (tenancy.gate.needsView())
      return tenancy.gate.flush().then(() => whenSettled(this.gate(request), settle));
    return whenSettled(this.gate(request), settle);
  }

  /** The tenant gate's verdict: every limit for a turn, the allowed models for a count. */
  private gate(request: AdmissionRequest): GateVerdict | Promise<GateVerdict> {
    const { gate } = this.deps.tenancy;
    if (request.kind === "count")
      return request.model === null ? { model: "" } : gate.resolveModel(request.model);
    return gate.admit(request.model ?? "", request.bytes, estimateTokens(request.bytes));
  }
}
