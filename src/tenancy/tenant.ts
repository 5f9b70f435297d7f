/**
 * What a tenant is to the data plane: its limits and settings, and the snapshot of both the Worker
 * caches per key (`Tenant`). Owns their schemas: the admin API accepts exactly these fields, and
 * everything the control plane stores passes them.
 * Invariant: a `Tenant` never carries a secret (the tenant's upstream key stays sealed in its
 * Durable Object and reaches a session only sealed, in its sync reply, to be unsealed there:
 * tenant-upstream-key.ts; a `Tenant` says only whether there is one).
 */
import { z } from "zod";
import { policyOverrideSchema } from "../safety/policy.ts";

/**
 * Per-tenant limits (docs/tenancy.md); null or absent = unlimited. How far each holds under
 * concurrency is docs/tenancy.md's table and its "Limits under concurrency".
 */
export const tenantLimitsSchema = z
  .object({
    /** WebSockets open at once, across every session and key of the tenant (exact, checked before the upgrade). */
    max_sockets: z.number().int().positive().nullable(),
    /** Distinct sessions with an open socket, per key (exact, checked before the upgrade). */
    sessions_per_key: z.number().int().positive().nullable(),
    /** Calls admitted per clock minute across the tenant (at most this many: leases, docs/tenancy.md). */
    turns_per_minute: z.number().int().positive().nullable(),
    /** Input + output tokens per UTC day, from each call's usage (each reserves its estimate at admission). */
    tokens_per_day: z.number().int().positive().nullable(),
    /** Bytes of requests (HTTP bodies, `response.create` frames) per minute across the tenant (as turns). */
    request_bytes_per_minute: z.number().int().positive().nullable(),
  })
  .partial()
  .strict();

/** Limits with every field present (null = unlimited). */
export type TenantLimits = { [K in keyof z.infer<typeof tenantLimitsSchema>]-?: number | null };

export const NO_LIMITS: TenantLimits = {
  max_sockets: null,
  sessions_per_key: null,
  turns_per_minute: null,
  tokens_per_day: null,
  request_bytes_per_minute: null,
};

/** A change of limits: a number sets one, null lifts it, absent keeps it. */
export type LimitsPatch = z.infer<typeof tenantLimitsSchema>;

/** `limits` with `patch` applied. */
export function patchLimits(limits: TenantLimits, patch: LimitsPatch): TenantLimits {
  const next = { ...limits };
  for (const name of Object.keys(NO_LIMITS) as (keyof TenantLimits)[]) {
    const value = patch[name];
    if (value !== undefined) next[name] = value;
  }
  return next;
}

/** Fills absent limits with null. */
export function fullLimits(partial: z.infer<typeof tenantLimitsSchema> | undefined): TenantLimits {
  const limits = { ...NO_LIMITS };
  for (const name of Object.keys(NO_LIMITS) as (keyof TenantLimits)[]) limits[name] = partial?.[name] ?? null;
  return limits;
}

/** Per-tenant settings an operator sets (`PATCH /admin/v1/tenants/{id}`). */
export const tenantSettingsSchema = z
  .object({
    /** Models this tenant may use (null = every configured model). */
    models: z.array(z.string().min(1).max(256)).max(256).nullable(),
    /** Safety policy override (the `SAFETY_TENANTS` entry it replaces; docs/safety.md). */
    safety: policyOverrideSchema.nullable(),
    /**
     * Routing overrides: a model id → the model sent upstream instead (e.g. pin `gpt-5.1` to a
     * dated snapshot for this tenant).
     */
    model_aliases: z.record(z.string().min(1).max(256), z.string().min(1).max(256)).nullable(),
  })
  .partial()
  .strict();

export type TenantSettings = z.infer<typeof tenantSettingsSchema>;

/** The key id of a `DELTAGATE_API_KEYS` key (resolve-key.ts), the ledger's key for a call made with one. */
export const ENV_KEY_ID = "env";

/** The snapshot of a tenant the Worker caches per key and the session Durable Object syncs. */
export interface Tenant {
  id: string;
  /** The key it was resolved from (`env` for a `DELTAGATE_API_KEYS` key). */
  keyId: string;
  limits: TenantLimits;
  settings: TenantSettings;
  /**
   * Whether the tenant brought its own upstream key: `false` makes a session drop the key at once;
   * `true` makes one that does not hold it read it before its next turn (tenant-upstream-key.ts).
   */
  ownUpstreamKey: boolean;
}
