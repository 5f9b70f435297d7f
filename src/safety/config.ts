/**
 * Safety configuration: the deployment policy (`SAFETY`), per-tenant overrides (`SAFETY_TENANTS`),
 * per-route overrides (`UPSTREAMS[].safety`), the rules (`SAFETY_RULES`), the moderation endpoint
 * (default: the default upstream's base URL and key), Llama Guard's model and the accounting log
 * (`SAFETY_LOG`). The variables are declared in src/config/schema.ts; this module owns the formats
 * of the JSON ones and policy resolution: defaults ← deployment ← route ← tenant.
 * Invariant: a `SafetySettings` never names a classifier it cannot build (Llama Guard needs the
 * `AI` binding), so a misconfiguration fails at startup, not on a turn.
 */
import { routesFor, type UpstreamRoute } from "../upstream/routes.ts";
import { type RulesConfig, rulesConfigSchema } from "./classifiers/rules.ts";
import {
  applyOverride,
  DEFAULT_POLICY,
  type PolicyOverride,
  parseOverride,
  type SafetyPolicy,
} from "./policy.ts";
import type { SafetyLog } from "./report.ts";

/**
 * What the safety settings are made of, each already parsed from its environment variable by the
 * configuration schema (src/config/schema.ts) with the parsers below.
 */
export interface SafetyInputs {
  /** The deployment's policy (`SAFETY`), or none (the built-in policy). */
  policy: PolicyOverride | undefined;
  /** Overrides by tenant id (`SAFETY_TENANTS`). */
  tenants: ReadonlyMap<string, PolicyOverride>;
  /** The rules classifier's configuration (`SAFETY_RULES`). */
  rules: RulesConfig;
  /** Base URL of the moderation endpoint (`SAFETY_MODERATION_URL`); null: the default upstream's. */
  moderationUrl: string | null;
  /** Its bearer token (`SAFETY_MODERATION_API_KEY`); null: the default upstream's for its URL. */
  moderationApiKey: string | null;
  moderationModel: string;
  llamaGuardModel: string;
  log: SafetyLog;
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
 * A policy written as JSON in the variable `name` (`SAFETY`).
 * @throws {Error} naming the variable and field when it is not JSON or not a policy.
 */
export function parsePolicySetting(raw: string, name: string): PolicyOverride {
  return parseOverride(parseJson(raw, name), name);
}

/**
 * `SAFETY_TENANTS`: a JSON object of tenant → policy.
 * @throws {Error} naming the variable (and the tenant) when it is invalid.
 */
export function parseTenantPolicies(raw: string, name: string): ReadonlyMap<string, PolicyOverride> {
  const parsed = parseJson(raw, name);
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw new Error(`${name} must be a JSON object of tenant → policy`);
  }
  const tenants = new Map<string, PolicyOverride>();
  for (const [tenant, override] of Object.entries(parsed)) {
    tenants.set(tenant, parseOverride(override, `${name}.${tenant}`));
  }
  return tenants;
}

/**
 * `SAFETY_RULES`: the rules classifier's configuration, JSON (unset: `{}`, the defaults).
 * @throws {Error} naming the variable and the field when it is invalid.
 */
export function parseRulesSetting(raw: string | undefined, name: string): RulesConfig {
  const parsed = rulesConfigSchema.safeParse(raw === undefined ? {} : parseJson(raw, name));
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(`${name} is invalid at ${issue?.path.join(".") || "?"}: ${issue?.message}`);
  }
  return parsed.data;
}

/**
 * The safety settings of a deployment.
 * @param upstream the default upstream (the moderation endpoint's default).
 * @param hasAi whether an `AI` binding exists (Llama Guard).
 * @throws {Error} naming the setting when a route's policy is invalid or a policy names Llama
 *   Guard without `AI`.
 */
export function parseSafetySettings(
  inputs: SafetyInputs,
  routes: readonly UpstreamRoute[],
  upstream: { baseUrl: string; apiKey: string | null },
  hasAi: boolean,
): SafetySettings {
  const policy = applyOverride(DEFAULT_POLICY, inputs.policy);
  const { tenants } = inputs;
  const routeOverrides = routes.map((route, index) =>
    route.safety === null ? undefined : parseOverride(route.safety, `UPSTREAMS[${index}].safety`),
  );
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
  return {
    policy,
    tenants,
    routes,
    routeOverrides,
    rules: inputs.rules,
    moderation: {
      baseUrl: inputs.moderationUrl ?? upstream.baseUrl,
      apiKey: inputs.moderationApiKey ?? (inputs.moderationUrl ? null : upstream.apiKey),
      model: inputs.moderationModel,
    },
    llamaGuardModel: inputs.llamaGuardModel,
    log: inputs.log,
  };
}

/** The policy of a turn of `model` for `tenant`: deployment ← the model's first route ← the tenant. */
export function policyFor(settings: SafetySettings, model: string, tenant: string | null): SafetyPolicy {
  const route = routesFor(settings.routes, model)[0];
  const routeOverride = route ? settings.routeOverrides[settings.routes.indexOf(route)] : undefined;
  const tenantOverride = tenant === null ? undefined : settings.tenants.get(tenant);
  return applyOverride(applyOverride(settings.policy, routeOverride), tenantOverride);
}
