/**
 * The local stack's secrets (scripts/local-secrets.ts): generated once, random, in a private file
 * beside the state, and the same on every later start of that state; a file missing a value gets
 * it; a broken file is refused, not silently replaced.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  LEGACY_LOCAL_SECRET_NAMES,
  LOCAL_SECRET_NAMES,
  LOCAL_SECRETS_FILE,
  localSecrets,
} from "../../../scripts/local-secrets.ts";

const dirs: string[] = [];
function stateDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "deltagate-secrets-"));
  dirs.push(dir);
  return join(dir, "state"); // not created yet, as on a first `npm start`
}
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe("localSecrets", () => {
  it("generates random values once, mode 0600, and reads the same ones back", () => {
    const dir = stateDir();
    const first = localSecrets(dir);
    expect(Object.keys(first).sort()).toEqual([...LOCAL_SECRET_NAMES].sort());
    expect(statSync(join(dir, LOCAL_SECRETS_FILE)).mode & 0o777).toBe(0o600);
    expect(localSecrets(dir)).toEqual(first);
    const other = localSecrets(stateDir());
    for (const name of LOCAL_SECRET_NAMES) expect(other[name]).not.toBe(first[name]);
  });

  it("adds a missing value and keeps the others", () => {
    const dir = stateDir();
    const first = localSecrets(dir);
    const { DELTAGATE_SECRET: _dropped, ...rest } = first;
    writeFileSync(join(dir, LOCAL_SECRETS_FILE), JSON.stringify(rest));
    const again = localSecrets(dir);
    expect(again.ADMIN_API_KEY).toBe(first.ADMIN_API_KEY);
    expect(again.DELTAGATE_SECRET).not.toBe(first.DELTAGATE_SECRET);
    expect(JSON.parse(readFileSync(join(dir, LOCAL_SECRETS_FILE), "utf8"))).toEqual(again);
  });

  it("keeps the deprecated secrets of a file written before the root secret, and generates none", () => {
    const dir = stateDir();
    // What the version before DELTAGATE_SECRET wrote (its four names).
    const old = {
      CLIENT_SECRET_SIGNING_KEY: "old-signing-key-0123456789abcdef0123456789",
      CONTROL_SECRET: "old-control-secret-0123456789abcdef012345",
      ADMIN_API_KEY: "old-admin-key-0123456789abcdef0123456789ab",
      COMPACTION_KEY: "old-compaction-key-0123456789abcdef012345",
    };
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, LOCAL_SECRETS_FILE), JSON.stringify(old));
    const secrets = localSecrets(dir);
    expect(secrets).toMatchObject(old);
    expect(secrets.DELTAGATE_SECRET).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(localSecrets(dir)).toEqual(secrets);
    // A new state holds only the current names.
    const fresh = localSecrets(stateDir());
    for (const name of LEGACY_LOCAL_SECRET_NAMES) expect(fresh[name]).toBeUndefined();
  });

  it("refuses a file that is not a JSON object", () => {
    const dir = stateDir();
    localSecrets(dir);
    writeFileSync(join(dir, LOCAL_SECRETS_FILE), "[1]");
    expect(() => localSecrets(dir)).toThrow(/not a JSON object/);
  });
});
