/**
 * Direct access to a session Durable Object in tests: its stub (by tenant and session, named as
 * the Worker names it) and SQL counts read inside the object.
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
