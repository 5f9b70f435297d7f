/**
 * Pure safety logic: what of an item is classified and its content hash (src/safety/content.ts),
 * policy overrides and the per-turn plan with a request's `moderation` (src/safety/policy.ts),
 * and configuration parsing (src/safety/config.ts).
 */
import { describe, expect, it } from "vitest";
import {
  parsePolicySetting,
  parseRulesSetting,
  parseSafetySettings,
  parseTenantPolicies,
  policyFor,
  type SafetyInputs,
} from "../../../src/safety/config.ts";
import {
  itemText,
  MAX_TEXT_CHARS,
  pieces,
  sampled,
  sha256Hex,
  toolText,
} from "../../../src/safety/content.ts";
import { applyOverride, DEFAULT_POLICY, parseOverride, planTurn } from "../../../src/safety/policy.ts";
import { parseRoutes } from "../../../src/upstream/routes.ts";

describe("content", () => {
  it("classifies what the model reads, not ids, structure or inline data", () => {
    const message = {
      id: "msg_1",
      type: "message",
      role: "user",
      content: [
        { type: "input_text", text: "look at this" },
        { type: "input_image", image_url: "https://example.com/cat.png", detail: "auto" },
        { type: "input_image", image_url: "data:image/png;base64,AAAA" },
      ],
    };
    expect(itemText(message)).toBe("look at this\nhttps://example.com/cat.png");
    const call = {
      type: "function_call",
      id: "fc_1",
      call_id: "call_9",
      name: "exec",
      arguments: '{"cmd":"ls"}',
    };
    expect(itemText(call)).toBe('{"cmd":"ls"}');
    expect(itemText({ type: "function_call_output", call_id: "c", output: "total 0" })).toBe("total 0");
    expect(
      itemText({
        type: "reasoning",
        encrypted_content: "xyz",
        summary: [{ type: "summary_text", text: "s" }],
      }),
    ).toBe("s");
    const tool = {
      type: "function",
      name: "exec",
      description: "Runs a command.",
      strict: true,
      parameters: {},
    };
    expect(toolText(tool)).toBe("exec\nRuns a command.");
  });

  it("hashes with SHA-256 and samples deterministically by hash", async () => {
    expect(await sha256Hex("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    const hash = await sha256Hex("some tool output");
    expect(sampled(hash, 1)).toBe(true);
    expect(sampled(hash, 0)).toBe(false);
    expect(sampled(hash, 0.5)).toBe(sampled(hash, 0.5));
    const hashes = await Promise.all(Array.from({ length: 400 }, (_, i) => sha256Hex(`output ${i}`)));
    const rate = hashes.filter((h) => sampled(h, 0.25)).length / hashes.length;
    expect(rate).toBeGreaterThan(0.15);
    expect(rate).toBeLessThan(0.35);
  });

  it("cuts long texts into pieces a classifier accepts", () => {
    expect(pieces("")).toEqual([]);
    const long = "x".repeat(MAX_TEXT_CHARS * 2 + 5);
    expect(pieces(long).map((p) => p.length)).toEqual([MAX_TEXT_CHARS, MAX_TEXT_CHARS, 5]);
  });
});

describe("policy", () => {
  it("parses overrides and applies them over the defaults", () => {
    const override = parseOverride(
      { mode: "blocking", classifier: "moderation", items: { function_call_output: "sample:0.1" } },
      "SAFETY",
    );
    const policy = applyOverride(DEFAULT_POLICY, override);
    expect(policy).toMatchObject({
      mode: "blocking",
      classifier: "moderation",
      outputClassifier: "moderation",
    });
    expect(policy.items.function_call_output).toEqual({ kind: "sample", rate: 0.1 });
    expect(applyOverride(policy, { output_classifier: "rules" }).outputClassifier).toBe("rules");
    expect(() => parseOverride({ mode: "sometimes" }, "SAFETY_TENANTS.acme")).toThrow(
      /SAFETY_TENANTS\.acme.*mode/,
    );
    expect(() => parseOverride({ items: { message: "sample:2" } }, "SAFETY")).toThrow(/items/);
    expect(() => parseOverride({ unknown: 1 }, "SAFETY")).toThrow();
  });

  it("plans nothing when off and the request is silent", () => {
    expect(planTurn({ ...DEFAULT_POLICY, mode: "off" }, null)).toBeNull();
  });

  it("a request's moderation adds reporting and blocking but cannot switch Deltagate's checks off", () => {
    const score = { model: "omni-moderation-latest", policy: { input: { mode: "score" as const } } };
    expect(planTurn(DEFAULT_POLICY, score)).toMatchObject({
      inputBlock: true,
      outputBlock: true,
      report: true,
    });
    const off = { ...DEFAULT_POLICY, mode: "off" as const };
    expect(planTurn(off, score)).toMatchObject({
      inputCheck: true,
      inputBlock: false,
      outputBlock: false,
      report: true,
    });
    const block = {
      model: "m",
      policy: { input: { mode: "block" as const }, output: { mode: "block" as const } },
    };
    expect(planTurn(off, block)).toMatchObject({ inputBlock: true, outputBlock: true, requestModel: "m" });
    expect(planTurn({ ...DEFAULT_POLICY, mode: "blocking" }, null)?.timing).toBe("blocking");
  });
});

describe("configuration", () => {
  const upstream = { baseUrl: "http://up.test/v1", apiKey: "k" };
  const routes = parseRoutes(
    JSON.stringify([
      {
        model: "guarded-*",
        api: "responses-http",
        base_url: "http://up.test/v1",
        safety: { mode: "blocking" },
      },
      { model: "*", api: "responses-http", base_url: "http://up.test/v1" },
    ]),
    { ...upstream, api: "responses-http" },
    () => undefined,
  );

  /** The inputs of an unconfigured deployment, with `own` on top. */
  const inputs = (own: Partial<SafetyInputs> = {}): SafetyInputs => ({
    policy: undefined,
    tenants: new Map(),
    rules: parseRulesSetting(undefined, "SAFETY_RULES"),
    moderationUrl: null,
    moderationApiKey: null,
    moderationModel: "omni-moderation-latest",
    llamaGuardModel: "@cf/meta/llama-guard-3-8b",
    log: "notable",
    ...own,
  });

  it("defaults to parallel input checks and rules output checks, moderation at the upstream", () => {
    const settings = parseSafetySettings(inputs(), routes, upstream, false);
    expect(settings.policy).toMatchObject({
      mode: "parallel",
      classifier: "rules",
      outputClassifier: "rules",
    });
    expect(settings.moderation).toEqual({
      baseUrl: "http://up.test/v1",
      apiKey: "k",
      model: "omni-moderation-latest",
    });
    expect(settings.policy.batchWaitMs).toBe(0);
    const batching = inputs({ policy: parsePolicySetting('{"batch_wait_ms":4}', "SAFETY") });
    expect(parseSafetySettings(batching, routes, upstream, false).policy.batchWaitMs).toBe(4);
  });

  it("resolves deployment ← route ← tenant", () => {
    const settings = parseSafetySettings(
      inputs({
        policy: parsePolicySetting('{"mode":"off"}', "SAFETY"),
        tenants: parseTenantPolicies(JSON.stringify({ acme: { failure: "open" } }), "SAFETY_TENANTS"),
      }),
      routes,
      upstream,
      false,
    );
    expect(policyFor(settings, "plain", "globex").mode).toBe("off");
    expect(policyFor(settings, "guarded-1", "globex").mode).toBe("blocking");
    expect(policyFor(settings, "guarded-1", "acme")).toMatchObject({ mode: "blocking", failure: "open" });
  });

  it("refuses llama-guard without an AI binding, and bad JSON, by variable name", () => {
    const llamaGuard = inputs({ policy: parsePolicySetting('{"classifier":"llama-guard"}', "SAFETY") });
    expect(() => parseSafetySettings(llamaGuard, routes, upstream, false)).toThrow(/AI binding/);
    expect(parseSafetySettings(llamaGuard, routes, upstream, true).policy.classifier).toBe("llama-guard");
    expect(() => parsePolicySetting("{", "SAFETY")).toThrow(/SAFETY/);
    expect(() => parseTenantPolicies("{", "SAFETY_TENANTS")).toThrow(/SAFETY_TENANTS/);
    expect(() => parseRulesSetting('{"pii":["dna"]}', "SAFETY_RULES")).toThrow(/SAFETY_RULES/);
    // A moderation endpoint of its own does not get the upstream's key.
    const own = parseSafetySettings(
      inputs({ moderationUrl: "https://mod.test/v1" }),
      routes,
      upstream,
      false,
    );
    expect(own.moderation.apiKey).toBeNull();
  });
});
