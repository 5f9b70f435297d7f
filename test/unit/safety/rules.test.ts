/**
 * The local rules classifier (src/safety/classifiers/rules.ts, pii.ts): harmful intent and
 * secrets are flagged, benign code and security writing with alarming words are not, PII
 * detectors find what they claim (cards only with a known issuer and a valid Luhn checksum), and
 * the streaming hold-back covers exactly what could still grow into a match.
 */
import { describe, expect, it } from "vitest";
import { hasCardNumber, luhnValid } from "../../../src/safety/classifiers/pii.ts";
import { RulesClassifier } from "../../../src/safety/classifiers/rules.ts";

const rules = new RulesClassifier();

describe("rules classifier: benign code is not flagged", () => {
  const benign = [
    "kill -9 4242",
    "pkill -f node && kill -TERM $(cat server.pid)",
    "rm -rf build/ dist/ node_modules/.cache",
    "-- migration 0007\nDROP TABLE IF EXISTS sessions_old;\nALTER TABLE sessions RENAME TO sessions_old;",
    "This change reduces the attack surface of the parser.",
    "CVE-2024-3094: a backdoor in xz; a public exploit allows remote code execution via sshd.",
    "The test kills the child process and asserts the exit code.",
    "git log --author=alice@example.com --since=2.weeks",
    "Timestamps: 1700000000000 1700000000123; sizes 4096 8192; build 4111111111",
    "sha256 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
  ];
  for (const text of benign) {
    it(`passes ${JSON.stringify(text.slice(0, 40))}`, () => {
      expect(rules.verdict(text).flagged).toBe(false);
    });
  }
});

describe("rules classifier: what it flags", () => {
  it("flags explicit harmful intent, whole words, any case and spacing", () => {
    expect(rules.verdict("Tell me HOW TO  MAKE a\nbomb").categories["illicit/violent"]).toBe(true);
    expect(rules.verdict("just kill yourself").flagged).toBe(true);
    expect(rules.verdict("skill yourselves up").flagged).toBe(false);
  });

  it("flags API keys of common providers and private keys", () => {
    expect(rules.verdict("OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstuvwx12").categories).toMatchObject({
      "secrets/api_key": true,
    });
    expect(rules.verdict("aws AKIAIOSFODNN7EXAMPLE").flagged).toBe(true);
    expect(rules.verdict(`token ghp_${"a".repeat(36)}`).flagged).toBe(true);
    expect(rules.verdict("-----BEGIN RSA PRIVATE KEY-----\nMIIB...").categories["secrets/private_key"]).toBe(
      true,
    );
    expect(rules.verdict("sk-short").flagged).toBe(false);
  });

  it("flags card numbers only with a known issuer and a valid Luhn checksum", () => {
    expect(luhnValid("4111111111111111")).toBe(true);
    expect(luhnValid("4111111111111112")).toBe(false);
    expect(hasCardNumber("card 4111 1111 1111 1111 exp 12/29")).toBe(true);
    expect(hasCardNumber("card 4111-1111-1111-1111")).toBe(true);
    expect(hasCardNumber("amex 378282246310005")).toBe(true);
    expect(hasCardNumber("4111 1111 1111 1112")).toBe(false); // Luhn fails
    expect(hasCardNumber("1234567812345670")).toBe(false); // Luhn passes, no issuer
    expect(hasCardNumber("41111111111111119999")).toBe(false); // 20 digits: not a card
    expect(rules.verdict("pay with 5555555555554444").categories["pii/card_number"]).toBe(true);
  });

  it("detects e-mail addresses only when configured (off by default)", () => {
    expect(rules.verdict("mail bob@example.org").flagged).toBe(false);
    const withEmail = new RulesClassifier({ pii: ["email"] });
    expect(withEmail.verdict("mail bob@example.org").categories["pii/email"]).toBe(true);
    expect(withEmail.id).not.toBe(rules.id);
  });

  it("takes configured phrases and patterns", () => {
    const custom = new RulesClassifier({
      pii: [],
      phrases: [{ phrase: "purple monkey", category: "custom" }],
      patterns: [{ pattern: "TICKET-\\d{4}", category: "internal", hold: 12 }],
    });
    expect(custom.verdict("a Purple  Monkey dishwasher").categories.custom).toBe(true);
    expect(custom.verdict("see TICKET-1234").categories.internal).toBe(true);
    expect(custom.verdict("how to make a bomb").flagged).toBe(false); // defaults replaced
    expect(() => new RulesClassifier({ patterns: [{ pattern: "(", category: "x" }] })).toThrow(
      /patterns\[0\]/,
    );
  });
});

describe("rules classifier: streaming hold-back", () => {
  it("holds back a trailing run that could grow into a key or card number", () => {
    expect(rules.holdBack("run this: sk-pro")).toBe("sk-pro".length);
    expect(rules.holdBack("card 4111 1111 ")).toBe("4111 1111 ".length);
    expect(rules.holdBack("all words done. ")).toBe(0);
  });

  it("holds back the start of a phrase, at a word boundary only", () => {
    expect(rules.holdBack("ok. how to ma")).toBe("how to ma".length);
    expect(rules.holdBack("ok. kill your")).toBe("kill your".length);
    expect(rules.holdBack("I sow")).toBe(3); // "sow" could start nothing, but is a trailing word run
  });

  it("never holds more than the text", () => {
    expect(rules.holdBack("sk")).toBe(2);
    expect(rules.holdBack("")).toBe(0);
  });
});
