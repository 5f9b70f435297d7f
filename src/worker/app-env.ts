/** The Hono environment of the Worker: its bindings, and what authentication sets (src/worker/auth.ts). */
import type { Env } from "../config/env.ts";
import type { Principal } from "./auth.ts";

export type AppEnv = {
  Bindings: Env;
  Variables: {
    /** The authenticated tenant (`principal.tenant`). */
    tenant: string;
    /** Who made the request: its tenant and, for a client secret, the secret's claims. */
    principal: Principal;
  };
};
