/**
 * The local stack's secrets (scripts/local-secrets.ts): generated once, random, in a private file
 * beside the state, and the same on every later start of that state; a file missing a value gets
 * it; a broken file is refused, not silently replaced.
 */
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { LOCAL_SECRET_NAMES, LOCAL_SECRETS_FILE, localSecrets } from "../../../scripts/local-secrets.ts";

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
    const { COMPACTION_KEY: _dropped, ...rest } = first;
    writeFileSync(join(dir, LOCAL_SECRETS_FILE), JSON.stringify(rest));
    const again = localSecrets(dir);
    expect(again.CONTROL_SECRET).toBe(first.CONTROL_SECRET);
    expect(again.COMPACTION_KEY).not.toBe(first.COMPACTION_KEY);
    expect(JSON.parse(readFileSync(join(dir, LOCAL_SECRETS_FILE), "utf8"))).toEqual(again);
  });

  it("refuses a file that is not a JSON object", () => {
    const dir = stateDir();
    localSecrets(dir);
    writeFileSync(join(dir, LOCAL_SECRETS_FILE), "[1]");
    expect(() => localSecrets(dir)).toThrow(/not a JSON object/);
  });
});
