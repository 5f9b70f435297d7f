/**
 * Safety configuration parsed once from the environment: the deployment policy (`SAFETY` JSON,
 * then `SAFETY_MODE`), per-tenant overrides (`SAFETY_TENANTS`), per-route overrides
 * (`UPSTREAMS[].safety`), the rules (`SAFETY_RULES`), the moderation endpoint
 * (`SAFETY_MODERATION_URL`, default the default upstream's base URL; `SAFETY_MODERATION_API_KEY`,
 * default `UPSTREAM_API_KEY`; `SAFETY_MODERATION_MODEL`), Llama Guard's model, the deployment's
 * cross-session batching (`SAFETY_BATCH_WAIT_MS`, 0 = off; `SAFETY_BATCH_MAX_TEXTS`) and the
 * accounting log (`SAFETY_LOG`). Owns policy resolution: defaults ← deployment ← route ← tenant.
 * Invariant: a `SafetySettings` never names a classifier it cannot build (Llama Guard needs the
 * `AI` binding), so a misconfiguration fails at startup, not on a turn.
 */
import { z } from "zod";
import { routesFor, type UpstreamRoute } from "../upstream/routes.ts";
import { type RulesConfig, rulesConfigSchema } from "./classifiers/rules.ts";
import {
  applyOverride,
  DEFAULT_POLICY,
  type PolicyOverride,
  parseOverride,
  SAFETY_MODES,
  type SafetyPolicy,
} from "./policy.ts";
import type { SafetyLog } from "./report.ts";

/** The raw variables this module reads (a subset of the Worker's `Env`). */
export interface SafetyEnv {
  SAFETY?: string | undefined;
  SAFETY_MODE?: string | undefined;
  SAFETY_TENANTS?: string | undefined;
  SAFETY_RULES?: string | undefined;
  SAFETY_MODERATION_URL?: string | undefined;
  SAFETY_MODERATION_API_KEY?: string | undefined;
  SAFETY_MODERATION_MODEL?: string | undefined;
  SAFETY_LLAMA_GUARD_MODEL?: string | undefined;
  SAFETY_BATCH_WAIT_MS?: string | undefined;
  SAFETY_BATCH_MAX_TEXTS?: string | undefined;
  SAFETY_LOG?: string | undefined;
}

/** Parsed safety configuration. */
export interface SafetySettings {
  /** The deployment's policy. */
  policy: SafetyPolicy;
  /** Overrides by tenant id. */
  tenants: ReadonlyMap<string, PolicyOverride>;
  /** The routing table and each route's override (same order). */
  routes: readonly UpstreamRoute[];
  routeOverrides: readonly (PolicyOverride | undefined)[];
  rules: RulesConfig;
  moderation: { baseUrl: string; apiKey: string | null; model: string };
  llamaGuardModel: string;
  /** Which turns get an accounting log line (`SAFETY_LOG`, default `notable`). */
  log: SafetyLog;
}

function parseJson(raw: string, where: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    throw new Error(`${where} is not valid JSON`);
  }
}

/**
 * Parses the safety settings.
 * @param upstream the default upstream (the moderation endpoint's default).
 * @param hasAi whether an `AI` binding exists (Llama Guard).
 * @throws {Error} naming the variable when one is invalid or names Llama Guard without `AI`.
 */
export function parseSafetySettings(
  env: SafetyEnv,
  routes: readonly UpstreamRoute[],
  upstream: { baseUrl: string; apiKey: string | null },
  hasAi: boolean,
): SafetySettings {
  let policy = applyOverride(
    DEFAULT_POLICY,
    env.SAFETY ? parseOverride(parseJson(env.SAFETY, "SAFETY"), "SAFETY") : undefined,
  );
  if (env.SAFETY_MODE) policy = { ...policy, mode: z.enum(SAFETY_MODES).parse(env.SAFETY_MODE) };
  if (env.SAFETY_BATCH_WAIT_MS) {
    policy = {
      ...policy,
      batchWaitMs: z.coerce.number().int().min(0).max(50).parse(env.SAFETY_BATCH_WAIT_MS),
    };
  }
  if (env.SAFETY_BATCH_MAX_TEXTS) {
    policy = {
      ...policy,
      batchMaxTexts: z.coerce.number().int().min(1).max(256).parse(env.SAFETY_BATCH_MAX_TEXTS),
    };
  }
  const tenants = new Map<string, PolicyOverride>();
  if (env.SAFETY_TENANTS) {
    const raw = parseJson(env.SAFETY_TENANTS, "SAFETY_TENANTS");
    if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
      throw new Error("SAFETY_TENANTS must be a JSON object of tenant → policy");
    }
    for (const [tenant, override] of Object.entries(raw)) {
      tenants.set(tenant, parseOverride(override, `SAFETY_TENANTS.${tenant}`));
    }
  }
  const routeOverrides = routes.map((route, index) =>
    route.safety === null ? undefined : parseOverride(route.safety, `UPSTREAMS[${index}].safety`),
  );
  const rulesParsed = rulesConfigSchema.safeParse(
    env.SAFETY_RULES ? parseJson(env.SAFETY_RULES, "SAFETY_RULES") : {},
  );
  if (!rulesParsed.success) {
    const issue = rulesParsed.error.issues[0];
    throw new Error(`SAFETY_RULES is invalid at ${issue?.path.join(".") || "?"}: ${issue?.message}`);
  }
  const kinds = [
    policy.classifier,
    policy.outputClassifier,
    ...[...tenants.values(), ...routeOverrides].flatMap((o) =>
      o ? [o.classifier, o.output_classifier] : [],
    ),
  ];
  if (kinds.includes("llama-guard") && !hasAi) {
    throw new Error(
      "A safety policy names llama-guard, but the Worker has no AI binding (wrangler.toml [ai])",
    );
  }
  const moderationUrl = z
    .url({ protocol: /^https?$/ })
    .parse(env.SAFETY_MODERATION_URL ?? upstream.baseUrl)
    .replace(/\/+$/, "");
  return {
    policy,
    tenants,
    routes,
    routeOverrides,
    rules: rulesParsed.data,
    moderation: {
      baseUrl: moderationUrl,
      apiKey: env.SAFETY_MODERATION_API_KEY || (env.SAFETY_MODERATION_URL ? null : upstream.apiKey),
      model: env.SAFETY_MODERATION_MODEL || "omni-moderation-latest",
    },
    llamaGuardModel: env.SAFETY_LLAMA_GUARD_MODEL || "@cf/meta/llama-guard-3-8b",
    log: z.enum(["all", "notable", "off"]).parse(env.SAFETY_LOG || "notable"),
  };
}

/** The policy of a turn of `model` for `tenant`: deployment ← the model's first route ← the tenant. */
export function policyFor(settings: SafetySettings, model: string, tenant: string | null): SafetyPolicy {
  const route = routesFor(settings.routes, model)[0];
  const routeOverride = route ? settings.routeOverrides[settings.routes.indexOf(route)] : undefined;
  const tenantOverride = tenant === null ? undefined : settings.tenants.get(tenant);
  return applyOverride(applyOverride(settings.policy, routeOverride), tenantOverride);
}
