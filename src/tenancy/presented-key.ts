/**
 * The key a request presents: `Authorization: Bearer <key>` (as OpenAI) first, then Azure's
 * `api-key` (https://platform.openai.com/docs/api-reference/authentication). Shared by tenant
 * authentication (src/worker/auth.ts) and the admin API.
 */

/** The presented key, or null. */
export function presentedKey(headers: Headers): string | null {
  const auth = headers.get("authorization");
  if (auth) {
    const match = /^Bearer\s+(.+)$/i.exec(auth.trim());
    if (match?.[1]) return match[1].trim();
  }
  const apiKey = headers.get("api-key");
  return apiKey ? apiKey.trim() : null;
}
