/**
 * The turn count of a client secret inside its session Durable Object (`max_turns`,
 * src/store/secret-turns.ts), for sockets and HTTP requests alike; the rest of its binding is
 * src/auth/secret-binding.ts.
 * Invariant: a refused turn stores nothing and reaches no upstream; only a secret that carries
 * `max_turns` touches storage (one synchronous SQLite statement pair, no await; its commit, like
 * any write's, is awaited by the output gate before the turn's upstream request leaves), so a warm
 * turn of any other secret costs nothing beyond a tenant key's.
 */
import { turnsExhausted } from "../auth/errors.ts";
import type { ApiError } from "../protocol/errors.ts";
import { countSecretTurn } from "../store/secret-turns.ts";
import type { SecretTurnBinding } from "./internal-headers.ts";

/** Counts a turn of `binding` when it has `max_turns`; the error when it has used them all. */
export function countTurn(sql: SqlStorage, binding: SecretTurnBinding, nowMs: number): ApiError | null {
  if (binding.maxTurns === null) return null;
  const counted = countSecretTurn(
    sql,
    { id: binding.id, maxTurns: binding.maxTurns, expiresAt: binding.expiresAt },
    Math.floor(nowMs / 1000),
  );
  return counted ? null : turnsExhausted(binding.maxTurns);
}
