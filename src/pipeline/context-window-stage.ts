/**
 * The context-window stage: applies the request's `truncation` against the model's context window
 * before anything is sent (400 `context_length_exceeded`, or whole oldest turns dropped), and
 * records the turn in the session's render cache (src/context/context-window.ts).
 */
import type { ContextWindow } from "../context/context-window.ts";
import type { TurnStage } from "./stage.ts";

/** The context-window stage of a session. */
export function contextWindowStage(window: ContextWindow): TurnStage {
  return { name: "context-window", wrap: (inner, turn) => window.fit(inner, turn) };
}
