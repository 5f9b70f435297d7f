/**
 * The usage stage: every `response.completed` / `response.incomplete` carries a usage, the
 * upstream's own or, when it gives none (some Chat Completions servers), Deltagate's count of
 * what was sent and received (src/context/usage.ts). Sits inside the context-window stage, so it
 * counts the context as actually sent.
 */
import type { ContextWindow } from "../context/context-window.ts";
import type { TurnStage } from "./stage.ts";

/** The usage stage of a session. */
export function usageStage(window: ContextWindow): TurnStage {
  return { name: "usage", wrap: (inner, turn) => window.withUsage(inner, turn) };
}
