/** The Hono environment of the Worker: its bindings, and what authentication sets (src/worker/auth.ts). */

import type { ClientSecretClaims } from "../auth/client-secret.ts";
import type { SessionEnv } from "../session/session-do.ts";

/** Who made a request: its tenant and, for a client secret, the secret's claims (src/worker/auth.ts). */
export interface Principal {
  tenant: string;
  /** The claims of the client secret it presented; null for a tenant API key. */
  secret: ClientSecretClaims | null;
}

export type AppEnv = {
  Bindings: SessionEnv;
  Variables: {
    /** The authenticated tenant (`principal.tenant`). */
    tenant: string;
    /** Who made the request: its tenant and, for a client secret, the secret's claims. */
    principal: Principal;
  };
};
