/**
 * A tenant's webhook endpoint as a session reads it before delivering (src/session/webhook-deliveries.ts):
 * the URL and the sealed signing secret from the tenant's Durable Object (`webhookEndpoint`), the
 * secret unsealed here with the key derived for it from the control secret (`DELTAGATE_SECRET`;
 * control-crypto.ts), in memory only, and handed to the session's redactor before it is used, so
 * no log line or error can show it.
 * Read for each alarm that delivers (one RPC for its whole batch, off any client's path), so a
 * changed or removed endpoint applies to the next attempt.
 */
import type { SecretRedactor } from "../secrets/redactor.ts";
import type { DeliveryTarget } from "../webhooks/delivery.ts";
import { controlKeys, openWebhookSecret } from "./control-crypto.ts";
import type { TenancyEnv } from "./tenancy-env.ts";

/**
 * The endpoint `tenant` has now, or null when it has none (or the deployment has no control plane).
 * @throws {Error} when it has one that cannot be read (the control plane unreachable, no or another
 *   control secret): the delivery is retried later, not dropped.
 */
export async function webhookTarget(
  env: TenancyEnv,
  controlSecret: string | null,
  tenant: string | null,
  redactor: SecretRedactor,
): Promise<DeliveryTarget | null> {
  if (!tenant || !env.TENANTS) return null;
  const stored = await env.TENANTS.getByName(tenant).webhookEndpoint();
  if (!stored) return null;
  const keys = controlKeys(controlSecret);
  if (!keys) throw new Error("DELTAGATE_SECRET is not set: the webhook secret cannot be unsealed");
  const secret = await openWebhookSecret(await keys, tenant, stored.secretSealed);
  redactor.add([secret]);
  return { url: stored.url, secret };
}
