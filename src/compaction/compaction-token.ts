/**
 * The `encrypted_content` of a compaction item Deltagate issued itself: the summary it asked the
 * route's model for, sealed with AES-GCM (WebCrypto) so a client can carry it but neither read nor
 * change it. Owns the token format, the key handling and the check of a token.
 * Format: `dgc1.<kid>.<base64url(iv ‖ ciphertext ‖ tag)>`: `kid` is the first 8 hex digits of
 * SHA-256 of the key (which key sealed it, so a rotated key still opens old items), `iv` 12
 * random bytes, the AES-256 key is SHA-256 of the configured secret (`COMPACTION_KEY`), and the
 * additional data binds the token to its tenant (`deltagate-compaction-v1|<tenant>`): another
 * tenant's item, or any changed byte, fails to open.
 * Plaintext: JSON `CompactionPayload` (the summary text, the model that wrote it, when, and
 * whether it starts the context window). Tokens are opaque to clients by design, as OpenAI's are.
 * Invariant: `openToken` either returns the payload this Deltagate sealed for this tenant or throws
 * `CompactionTokenError`; it never returns partial or unauthenticated data.
 * Source: https://developer.mozilla.org/en-US/docs/Web/API/SubtleCrypto/encrypt#aes-gcm,
 *   https://developers.cloudflare.com/workers/runtime-apis/web-crypto/
 */

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

const encoder = new TextEncoder();

interface DerivedKey {
  kid: string;
  key: CryptoKey;
}

/** Derived keys per secret text, per isolate (importing a key costs a digest and an import). */
const derived = new Map<string, Promise<DerivedKey>>();

async function derive(secret: string): Promise<DerivedKey> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", encoder.encode(secret)));
  const kidDigest = new Uint8Array(await crypto.subtle.digest("SHA-256", digest));
  const kid = [...kidDigest.slice(0, 4)].map((b) => b.toString(16).padStart(2, "0")).join("");
  const key = await crypto.subtle.importKey("raw", digest, "AES-GCM", false, ["encrypt", "decrypt"]);
  return { kid, key };
}

function keyOf(secret: string): Promise<DerivedKey> {
  let key = derived.get(secret);
  if (!key) {
    key = derive(secret);
    derived.set(secret, key);
    if (derived.size > 16) derived.delete(derived.keys().next().value ?? "");
  }
  return key;
}

function additionalData(tenant: string): Uint8Array {
  return encoder.encode(`deltagate-compaction-v1|${tenant}`);
}

function toBase64Url(bytes: Uint8Array): string {
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

function fromBase64Url(text: string): Uint8Array {
  if (!/^[A-Za-z0-9_-]*$/.test(text)) throw new CompactionTokenError("not base64url");
  const binary = atob(text.replaceAll("-", "+").replaceAll("_", "/"));
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
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
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const sealed = new Uint8Array(
    await crypto.subtle.encrypt(
      { name: "AES-GCM", iv, additionalData: additionalData(tenant) },
      key,
      encoder.encode(JSON.stringify(payload)),
    ),
  );
  const body = new Uint8Array(iv.length + sealed.length);
  body.set(iv);
  body.set(sealed, iv.length);
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
  if (bytes.length < 12 + 16) throw new CompactionTokenError("malformed");
  let plain: ArrayBuffer;
  try {
    plain = await crypto.subtle.decrypt(
      { name: "AES-GCM", iv: bytes.slice(0, 12), additionalData: additionalData(tenant) },
      match.key,
      bytes.slice(12),
    );
  } catch {
    throw new CompactionTokenError("does not authenticate");
  }
  const payload = JSON.parse(new TextDecoder().decode(plain)) as CompactionPayload;
  if (payload.v !== 1 || typeof payload.summary !== "string") throw new CompactionTokenError("malformed");
  return payload;
}
