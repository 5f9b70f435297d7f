/**
 * Authentication of client requests against configured API keys (`Authorization: Bearer <key>`
 * as OpenAI, or Azure's `api-key`: https://platform.openai.com/docs/api-reference/authentication). Owns key → tenant resolution. Invariant: keys are compared in
 * constant time per candidate and never logged or echoed.
 */
import type { Config } from "../config/config.ts";

/** The key a request presents (`Authorization: Bearer …` first, then `api-key`), or null. */
function presentedKey(headers: Headers): string | null {
  const auth = headers.get("authorization");
  if (auth) {
    const match = /^Bearer\s+(.+)$/i.exec(auth.trim());
    if (match?.[1]) return match[1].trim();
  }
  const apiKey = headers.get("api-key");
  return apiKey ? apiKey.trim() : null;
}

function safeEqual(a: string, b: string): boolean {
  const x = new TextEncoder().encode(a);
  const y = new TextEncoder().encode(b);
  if (x.length !== y.length) return false;
  let diff = 0;
  for (let i = 0; i < x.length; i++) diff |= (x[i] ?? 0) ^ (y[i] ?? 0);
  return diff === 0;
}

/** The tenant of the presented key, or null when it is missing or unknown. */
export function authenticate(headers: Headers, config: Config): string | null {
  const key = presentedKey(headers);
  if (!key) return null;
  let tenant: string | null = null;
  for (const [candidate, owner] of config.apiKeys) {
    if (safeEqual(candidate, key)) tenant = owner;
  }
  return tenant;
}
