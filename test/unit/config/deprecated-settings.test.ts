/**
 * An existing deployment keeps its configuration (issue #24, build item 2): every deprecated name
 * (src/config/schema.ts `DEPRECATED_SETTINGS`) still reads into the same `Config` as the setting
 * that replaces it; old secrets alone are used exactly as before, so what the code before the
 * schema made with them still verifies and opens; the root secret derives one key per purpose;
 * each deprecated name is warned about once.
 */
import { hkdfSync } from "node:crypto";
import { afterEach, describe, expect, it, vi } from "vitest";
import { mintClientSecret, verifyClientSecret } from "../../../src/auth/client-secret.ts";
import { openToken, sealToken } from "../../../src/compaction/compaction-token.ts";
import { type Config, parseConfig } from "../../../src/config/config.ts";
import type { Env } from "../../../src/config/env.ts";
import { DERIVED_PURPOSES, derivedSecret, ROOT_SALT } from "../../../src/config/root-secret.ts";
import type { DEPRECATED_SETTINGS } from "../../../src/config/schema.ts";
import { controlKeys, openUpstreamKey, sealUpstreamKey } from "../../../src/tenancy/control-crypto.ts";

const ROOT = "root-secret-of-a-test-deployment-0123456789";
const OLD_CONTROL = "old-control-secret-0123456789";
const OLD_SIGNING = "old-client-secret-signing-key-0123456789";
const OLD_COMPACTION = "old-compaction-key";

/** `config` with its promises settled and without its redactor (compared on its own). */
async function settled(config: Config): Promise<Record<string, unknown>> {
  const { redactor: _, ...rest } = config;
  return {
    ...rest,
    compactionKeys: await config.compactionKeys,
    clientSecrets: { ...config.clientSecrets, signingKey: await config.clientSecrets.signingKey },
  };
}

const claims = {
  tenant: "acme",
  id: "s1",
  sessionId: "sess_1",
  expiresAt: Math.floor(Date.now() / 1000) + 600,
  models: null,
  maxTurns: null,
  maxRequestBytes: null,
};
const payload = { v: 1 as const, summary: "earlier turns", model: "m", created_at: 1, window: false };

afterEach(() => {
  vi.restoreAllMocks();
});

describe("deprecated settings", () => {
  it("warns once per isolate for each deprecated name set, naming what replaces it", () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    parseConfig({ SAFETY_MODE: "off" } as Env);
    parseConfig({ SAFETY_MODE: "blocking" } as Env);
    const lines = warn.mock.calls
      .map((call) => String(call[0]))
      .filter((line) => line.includes("SAFETY_MODE"));
    // The first test of the file: no parse of this isolate has warned yet.
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0] ?? "")).toEqual({
      type: "deltagate.config",
      warning: 'SAFETY_MODE is deprecated and read until 0.3; use mode in SAFETY ({"mode":"blocking"})',
    });
  });

  it("an old-style configuration (every renamed or merged name) parses to the same Config as the new style", async () => {
    vi.spyOn(console, "warn").mockImplementation(() => {});
    const common = { DELTAGATE_API_KEYS: "k1:acme", UPSTREAM_BASE_URL: "http://127.0.0.1:9/v1" };
    const oldStyle = {
      ...common,
      // The values the root derives, so both styles name the same keys.
      CONTROL_SECRET: ROOT,
      CLIENT_SECRET_SIGNING_KEY: await derivedSecret(ROOT, "clientSecrets"),
      COMPACTION_KEY: await derivedSecret(ROOT, "compaction"),
      SAFETY: JSON.stringify({ classifier: "moderation", mode: "parallel", batch_wait_ms: 1 }),
      SAFETY_MODE: "blocking",
      SAFETY_BATCH_WAIT_MS: "5",
      SAFETY_BATCH_MAX_TEXTS: "16",
    } satisfies Record<keyof typeof DEPRECATED_SETTINGS | keyof typeof common | "SAFETY", string>;
    const newStyle = {
      ...common,
      DELTAGATE_SECRET: ROOT,
      SAFETY: JSON.stringify({
        classifier: "moderation",
        mode: "blocking",
        batch_wait_ms: 5,
        batch_max_texts: 16,
      }),
    };
    const before = parseConfig(oldStyle as Env);
    const after = parseConfig(newStyle as Env);
    expect(await settled(before)).toEqual(await settled(after));
    expect(before.safety.policy).toMatchObject({ mode: "blocking", batchWaitMs: 5, batchMaxTexts: 16 });
    // The redactors differ only in that the old style has more secret bindings; both hide the root.
    for (const config of [before, after]) expect(config.redactor.text(`x ${ROOT} y`)).not.toContain(ROOT);
  });

  it("old secrets alone are used exactly as before: what they made still verifies and opens", async () => {
    vi.spyOn(console, "warn").mockImplementation(() => {});
    const config = parseConfig({
      CONTROL_SECRET: OLD_CONTROL,
      CLIENT_SECRET_SIGNING_KEY: ` ${OLD_SIGNING} `,
      COMPACTION_KEY: `${OLD_COMPACTION}, older-key`,
    } as Env);
    expect(config.controlSecret).toBe(OLD_CONTROL);
    expect(await config.clientSecrets.signingKey).toBe(OLD_SIGNING);
    expect(await config.compactionKeys).toEqual([OLD_COMPACTION, "older-key"]);
    // Made with the old values directly, as the code before the schema did.
    const secret = await mintClientSecret(OLD_SIGNING, claims);
    const signingKey = await config.clientSecrets.signingKey;
    expect((await verifyClientSecret(secret, signingKey ?? "", claims.expiresAt - 60)).ok).toBe(true);
    const token = await sealToken(payload, "acme", { secrets: ["older-key"] });
    expect(await openToken(token, "acme", { secrets: await config.compactionKeys })).toEqual(payload);
    const oldKeys = controlKeys(OLD_CONTROL);
    const newKeys = controlKeys(config.controlSecret);
    if (!oldKeys || !newKeys) throw new Error("no control keys");
    const sealed = await sealUpstreamKey(await oldKeys, "acme", "sk-upstream");
    expect(await openUpstreamKey(await newKeys, "acme", sealed)).toBe("sk-upstream");
  });

  it("with the root secret too, an old secret still wins, and old compaction keys still open", async () => {
    vi.spyOn(console, "warn").mockImplementation(() => {});
    const config = parseConfig({
      DELTAGATE_SECRET: ROOT,
      CONTROL_SECRET: OLD_CONTROL,
      CLIENT_SECRET_SIGNING_KEY: OLD_SIGNING,
      COMPACTION_KEY: OLD_COMPACTION,
    } as Env);
    expect(config.controlSecret).toBe(OLD_CONTROL);
    expect(await config.clientSecrets.signingKey).toBe(OLD_SIGNING);
    const keys = await config.compactionKeys;
    expect(keys).toEqual([await derivedSecret(ROOT, "compaction"), OLD_COMPACTION]);
    const old = await sealToken(payload, "acme", { secrets: [OLD_COMPACTION] });
    expect(await openToken(old, "acme", { secrets: keys })).toEqual(payload);
    const fresh = await sealToken(payload, "acme", { secrets: keys });
    await expect(openToken(fresh, "acme", { secrets: [OLD_COMPACTION] })).rejects.toThrow();
  });
});

describe("DELTAGATE_SECRET", () => {
  it("derives one secret per purpose; the control plane takes the root itself", async () => {
    const config = parseConfig({ DELTAGATE_SECRET: ROOT } as Env);
    const signing = await config.clientSecrets.signingKey;
    const [compaction, ...more] = await config.compactionKeys;
    expect(config.controlSecret).toBe(ROOT);
    expect(more).toEqual([]);
    expect(signing).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(compaction).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(new Set([ROOT, signing, compaction]).size).toBe(3);
    // Deterministic: every isolate of the deployment derives the same secrets.
    expect(signing).toBe(await derivedSecret(ROOT, "clientSecrets"));
    const other = parseConfig({ DELTAGATE_SECRET: `${ROOT}x` } as Env);
    expect(await other.clientSecrets.signingKey).not.toBe(signing);
  });

  it("is RFC 5869 HKDF-SHA-256 of the root, salt deltagate-secret, one info per purpose (as Node's hkdfSync)", async () => {
    for (const [purpose, info] of Object.entries(DERIVED_PURPOSES)) {
      const expected = Buffer.from(hkdfSync("sha256", ROOT, ROOT_SALT, info, 32)).toString("base64url");
      expect(await derivedSecret(ROOT, purpose as keyof typeof DERIVED_PURPOSES)).toBe(expected);
    }
  });

  it("is off when unset, and refused when shorter than 32 characters (without quoting it)", async () => {
    const config = parseConfig({} as Env);
    expect([config.controlSecret, config.clientSecrets.signingKey, await config.compactionKeys]).toEqual([
      null,
      null,
      [],
    ]);
    expect(() => parseConfig({ DELTAGATE_SECRET: "short-secret" } as Env)).toThrow(
      /^DELTAGATE_SECRET must be at least 32 characters$/,
    );
  });
});

describe("booleans", () => {
  it("are read one way for every setting, and a word that is neither is refused", () => {
    for (const word of ["0", "false", "OFF", " no "]) {
      expect(parseConfig({ TURN_LOG: word, ALLOW_INSECURE_API_KEY: word } as Env)).toMatchObject({
        turnLog: false,
        clientSecrets: { allowInsecureApiKey: false },
      });
    }
    for (const word of ["1", "true", "On", "yes"]) {
      expect(parseConfig({ TURN_LOG: word, ALLOW_INSECURE_API_KEY: word } as Env)).toMatchObject({
        turnLog: true,
        clientSecrets: { allowInsecureApiKey: true },
      });
    }
    expect(parseConfig({} as Env)).toMatchObject({
      turnLog: true,
      clientSecrets: { allowInsecureApiKey: false },
    });
    expect(() => parseConfig({ TURN_LOG: "banana" } as Env)).toThrow(/^TURN_LOG: expected true or false/);
    expect(() => parseConfig({ ALLOW_INSECURE_API_KEY: "please" } as Env)).toThrow(/ALLOW_INSECURE_API_KEY/);
  });
});
