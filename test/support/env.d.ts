/** Types the `env` of `cloudflare:workers` / `cloudflare:test` as Deltagate's `Env` in tests. */
declare namespace Cloudflare {
  interface Env extends import("../../src/config/env.ts").Env {}
}
