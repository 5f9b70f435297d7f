/**
 * Types `env` and `exports` of `cloudflare:workers` / `cloudflare:test` in tests as Deltagate's
 * `Env` and main module (workers-types merges these project declarations).
 */
declare namespace Cloudflare {
  interface GlobalProps {
    mainModule: typeof import("../../src/index.ts");
    durableNamespaces: "SessionDurableObject";
  }
  interface Env {
    SESSIONS: import("../../src/session/session-do.ts").SessionEnv["SESSIONS"];
    ASSETS: import("../../src/config/env.ts").Env["ASSETS"];
  }
}
