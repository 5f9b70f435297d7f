/**
 * The key a request presents: `Authorization: Bearer <key>` (as OpenAI) first, then Azure's
 * `api-key` (https://platform.openai.com/docs/api-reference/authentication). The one reading of
 * those headers: tenant authentication (src/worker/auth.ts, which adds a WebSocket upgrade's own
 * places) and the admin API use it.
 */

/** The presented key, or null (an empty header presents none). */
export function presentedKey(headers: Headers): string | null {
  const auth = headers.get("authorization");
  if (auth) {
    const match = /^Bearer\s+(.+)$/i.exec(auth.trim());
    if (match?.[1]) return match[1].trim();
  }
  return headers.get("api-key")?.trim() || null;
}
