/**
 * The local stack's own secrets (`npm start`, the end-to-end tests): the root secret
 * (`DELTAGATE_SECRET`, from which the control plane's, client secrets' and compaction items' keys
 * are derived: src/config/root-secret.ts) and the admin API key. Owns where they come from:
 * a file beside the Durable Object state they protect (`<state dir>/deltagate-local-secrets.json`,
 * under the gitignored `.wrangler/state` for `npm start`), generated once with random values and
 * read on every later start.
 * Invariant: no local secret is a published constant, so nobody can forge a client secret, mint
 * a key or open a sealed compaction item of someone's local stack without reading that file; and
 * a restart of the same state keeps its keys, so what the state holds (sealed compaction items,
 * minted keys, tenants' sealed upstream keys) and secrets minted before the restart stay valid.
 * Deleting the state directory deletes its keys with it. A file written before the root secret
 * (with `CLIENT_SECRET_SIGNING_KEY`, `CONTROL_SECRET`, `COMPACTION_KEY`) keeps those values and
 * they are passed on under their deprecated names, which the Worker reads until 0.3
 * (src/config/schema.ts `DEPRECATED_SETTINGS`), so that state stays valid too.
 */
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/** The file's name inside the state directory. */
export const LOCAL_SECRETS_FILE = "deltagate-local-secrets.json";

/** The Worker settings the file holds (names of docs/configuration.md's table). */
export const LOCAL_SECRET_NAMES = ["DELTAGATE_SECRET", "ADMIN_API_KEY"] as const;

/**
 * The deprecated settings a file written by an older version holds: kept, never generated
 * (read until 0.3, as the Worker reads them; docs/configuration.md "Deprecated names").
 */
export const LEGACY_LOCAL_SECRET_NAMES = [
  "CLIENT_SECRET_SIGNING_KEY",
  "CONTROL_SECRET",
  "COMPACTION_KEY",
] as const;

/** The local secrets, by setting name (the legacy ones only where the file has them). */
export type LocalSecrets = Record<(typeof LOCAL_SECRET_NAMES)[number], string> &
  Partial<Record<(typeof LEGACY_LOCAL_SECRET_NAMES)[number], string>>;

/** 32 random bytes, base64url (43 characters: above every minimum length the Worker checks). */
function randomSecret(): string {
  return randomBytes(32).toString("base64url");
}

/**
 * The secrets of the state in `stateDir`: read from its file, or generated and written there
 * (mode 0600) when it has none yet. A file missing a value (written by an older version) gets it
 * added; its legacy values are kept.
 * @throws {Error} when the file exists but is not a JSON object of strings.
 */
export function localSecrets(stateDir: string): LocalSecrets {
  const path = join(stateDir, LOCAL_SECRETS_FILE);
  let stored: Record<string, unknown> = {};
  if (existsSync(path)) {
    const parsed: unknown = JSON.parse(readFileSync(path, "utf8"));
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
      throw new Error(`${path} is not a JSON object; delete it to generate new local secrets.`);
    }
    stored = parsed as Record<string, unknown>;
  }
  let changed = false;
  const secrets = {} as LocalSecrets;
  for (const name of LOCAL_SECRET_NAMES) {
    const value = stored[name];
    if (typeof value === "string" && value.length > 0) {
      secrets[name] = value;
    } else {
      secrets[name] = randomSecret();
      changed = true;
    }
  }
  for (const name of LEGACY_LOCAL_SECRET_NAMES) {
    const value = stored[name];
    if (typeof value === "string" && value.length > 0) secrets[name] = value;
  }
  if (changed) {
    mkdirSync(stateDir, { recursive: true });
    writeFileSync(path, `${JSON.stringify(secrets, null, 2)}\n`, { mode: 0o600 });
  }
  return secrets;
}
