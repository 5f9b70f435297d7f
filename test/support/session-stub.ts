/**
 * Direct access to a session Durable Object in tests: its stub (by tenant and session, named as
 * the Worker names it), SQL counts read inside the object, and a probe of the SQL it runs.
 */
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { sessionObjectName } from "../../src/worker/responses-routes.ts";

/** The stub of a tenant's session Durable Object. */
export function sessionStub(tenant: string, session: string) {
  return env.SESSIONS.getByName(sessionObjectName(tenant, session));
}

/** Runs a COUNT(*) query inside the session's Durable Object. */
export async function countRows(
  tenant: string,
  session: string,
  table: "responses" | "items" | "released_scopes",
  where = "1=1",
) {
  return runInDurableObject(sessionStub(tenant, session), (_instance, state) => {
    const row = state.storage.sql
      .exec<{ n: number }>(`SELECT COUNT(*) AS n FROM ${table} WHERE ${where}`)
      .one();
    return row.n;
  });
}

/**
 * Starts recording every SQL statement the session's Durable Object runs from now on (each one
 * whitespace-folded, its first 80 characters) into the returned array, for the life of that
 * instance.
 */
export async function recordSql(tenant: string, session: string): Promise<string[]> {
  const seen: string[] = [];
  await runInDurableObject(sessionStub(tenant, session), (_instance, state) => {
    const sql = state.storage.sql;
    const exec = sql.exec.bind(sql);
    sql.exec = ((query: string, ...bindings: unknown[]) => {
      seen.push(query.replace(/\s+/g, " ").slice(0, 80));
      return exec(query, ...bindings);
    }) as typeof sql.exec;
  });
  return seen;
}
