/**
 * The `encrypted_content` of a compaction item Deltagate issued itself: the summary it asked the
 * route's model for, sealed with AES-GCM (src/crypto/sealing.ts) so a client can carry it but
 * neither read nor change it. Owns the token format, the key handling and the check of a token.
 * Format: `dgc1.<kid>.<base64url(iv ‖ ciphertext ‖ tag)>`: `kid` is the first 8 hex digits of
 * SHA-256 of the key (which key sealed it, so a rotated key still opens old items), `iv` 12
 * random bytes, the AES-256 key is SHA-256 of the configured secret (`Config.compactionKeys`: derived from
 * `DELTAGATE_SECRET`, then the deprecated `COMPACTION_KEY`'s), and the
 * additional data binds the token to its tenant (`deltagate-compaction-v1|<tenant>`): another
 * tenant's item, or any changed byte, fails to open.
 * Plaintext: JSON `CompactionPayload` (the summary text, the model that wrote it, when, and
 * whether it starts the context window). Tokens are opaque to clients by design, as OpenAI's are.
 * Invariant: `openToken` either returns the payload this Deltagate sealed for this tenant or throws
 * `CompactionTokenError` — a malformed token included — it never returns partial or
 * unauthenticated data.
 */
import { fromBase64Url, fromUtf8, toBase64Url, toHex } from "../crypto/encoding.ts";
import { importKey, perSecret, sha256 } from "../crypto/keys.ts";
import { open, seal } from "../crypto/sealing.ts";

/** Prefix of every token Deltagate issues (version 1). */
export const TOKEN_PREFIX = "dgc1.";

/** What a Deltagate compaction item carries, sealed. */
export interface CompactionPayload {
  /** Format version. */
  v: 1;
  /** The summary of the compacted context, as the model wrote it. */
  summary: string;
  /** The model (client id) that wrote it. */
  model: string;
  /** Unix seconds. */
  created_at: number;
  /**
   * True for an item produced as a response's output (`compaction_trigger`, `context_management`):
   * on later turns of its chain the context sent upstream starts at it (it replaces what came
   * before). False for `/v1/responses/compact` output, which the client sends back as input.
   */
  window: boolean;
}

/** A token that is not Deltagate's, was sealed with an unknown key or another tenant, or was changed. */
export class CompactionTokenError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "CompactionTokenError";
  }
}

/** The keys of a deployment: the first seals, every one opens (rotation). */
export interface CompactionKeys {
  /** Secrets, current first. */
  readonly secrets: readonly string[];
}

interface DerivedKey {
  kid: string;
  key: CryptoKey;
}

/** A secret's key and kid, derived once per isolate (a digest, a second digest and an import). */
const keyOf = perSecret(async (secret): Promise<DerivedKey> => {
  const digest = await sha256(secret);
  const kid = toHex((await sha256(digest)).subarray(0, 4));
  return { kid, key: await importKey(digest, "aes-gcm") };
});

function additionalData(tenant: string): string {
  return `deltagate-compaction-v1|${tenant}`;
}

/** True when `content` has the shape of a token Deltagate issues (not that it opens). */
export function isDeltagateToken(content: unknown): content is string {
  return typeof content === "string" && content.startsWith(TOKEN_PREFIX);
}

/**
 * Seals `payload` for `tenant` with the current key.
 * @throws {CompactionTokenError} when no key is configured.
 */
export async function sealToken(
  payload: CompactionPayload,
  tenant: string,
  keys: CompactionKeys,
): Promise<string> {
  const [secret] = keys.secrets;
  if (!secret) throw new CompactionTokenError("no compaction key is configured");
  const { kid, key } = await keyOf(secret);
  const body = await seal(key, JSON.stringify(payload), additionalData(tenant));
  return `${TOKEN_PREFIX}${kid}.${toBase64Url(body)}`;
}

/**
 * Opens a token sealed by `sealToken` for `tenant` with one of `keys`.
 * @throws {CompactionTokenError} for anything else (another issuer, another tenant, a rotated-out
 *   key, a changed byte, a malformed token).
 */
export async function openToken(
  token: string,
  tenant: string,
  keys: CompactionKeys,
): Promise<CompactionPayload> {
  if (!isDeltagateToken(token)) throw new CompactionTokenError("not issued by Deltagate");
  const [kid, body, extra] = token.slice(TOKEN_PREFIX.length).split(".");
  if (!kid || body === undefined || extra !== undefined) throw new CompactionTokenError("malformed");
  let match: DerivedKey | null = null;
  for (const secret of keys.secrets) {
    const candidate = await keyOf(secret);
    if (candidate.kid === kid) {
      match = candidate;
      break;
    }
  }
  if (!match) throw new CompactionTokenError("sealed with an unknown key");
  const bytes = fromBase64Url(body);
  if (!bytes) throw new CompactionTokenError("malformed");
  const plain = await open(match.key, bytes, additionalData(tenant));
  if (!plain) throw new CompactionTokenError("does not authenticate");
  const payload = JSON.parse(fromUtf8(plain)) as CompactionPayload;
  if (payload.v !== 1 || typeof payload.summary !== "string") throw new CompactionTokenError("malformed");
  return payload;
}
