/**
 * The safety stage: input checks (incremental, batched, cached) before or alongside the upstream
 * call, and output checks on the stream, by the session's safety checks (src/safety/). Sits
 * innermost, right around the route chain: the context-window stage outside it rejects an
 * over-long turn before any classifier is called, and the usage stage outside it fills the usage
 * of a response the output checks cut (`content_filter`).
 */
import type { SessionSafety } from "../safety/session-safety.ts";
import type { TurnStage } from "./stage.ts";

/** The safety stage of a session. */
export function safetyStage(safety: SessionSafety): TurnStage {
  return {
    name: "safety",
    wrap: (inner, turn) =>
      safety.wrap(inner, {
        responseId: turn.responseId,
        model: turn.request.model,
        previousResponseId: turn.request.previous_response_id ?? null,
        instructions: turn.request.instructions,
        tools: turn.request.tools,
        moderation: turn.request.moderation,
        history: turn.context.history.items,
        input: turn.context.input.map((counted) => counted.item),
        ...(turn.timer.trace ? { trace: turn.timer.trace } : {}),
      }),
  };
}
