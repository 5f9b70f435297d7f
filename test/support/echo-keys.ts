/**
 * Upstream keys of every shape the hostile trials saw relayed verbatim (issue #10), each bound to
 * the `workers` test project (vitest.config.ts) and used by the echoing upstream's routes
 * (`echo-<api>-<shape>`). Shared by the config (Node) and the tests (workerd): constants only.
 */

/** Shape name → key value. */
export const ECHO_KEYS = {
  /** No known shape: only redaction by value can catch it. */
  plain: "Zq8ty3PLAINalnum7730keyXy",
  groq: "gsk_4fKq0123456789abcdefXYZhostileGroqKey",
  xai: "xai-Q1w2E3r4T5y6U7i8O9p0hostileXaiKey",
  azure: "0f1e2d3c4b5a69788796a5b4c3d2e1f0",
  google: "AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4o5p",
  fireworks: "fw_3ZkP0123456789abcdefghHostile",
  openai: "sk-proj-AbCdEf0123456789_hostile-OpenAIkey",
} as const;

/** A key shape. */
export type EchoShape = keyof typeof ECHO_KEYS;

/**
 * The binding holding each key. `plain` sits in a binding whose name does not say "key": it is
 * redacted only because a route reads it through `api_key_var`.
 */
export const ECHO_KEY_BINDINGS: Record<EchoShape, string> = {
  plain: "ECHO_UPSTREAM_AUTH",
  groq: "ECHO_GROQ_KEY",
  xai: "ECHO_XAI_API_KEY",
  azure: "ECHO_AZURE_KEY",
  google: "ECHO_GOOGLE_KEY",
  fireworks: "ECHO_FIREWORKS_KEY",
  openai: "ECHO_OPENAI_API_KEY",
};

/** The wire APIs the echoing upstream speaks, by route model prefix. */
export const ECHO_APIS = {
  http: "responses-http",
  ws: "responses-ws",
  chat: "chat-completions",
} as const;
