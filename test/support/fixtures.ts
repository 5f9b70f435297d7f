/** Request fixtures shared by the workerd tests. */

/** A shell tool shaped like Codex's `exec_command` (test/support/codex-notes.md), minimal schema. */
export const SHELL_TOOL = {
  type: "function",
  name: "exec_command",
  description: "Runs a shell command.",
  parameters: {
    type: "object",
    properties: { cmd: { type: "string" } },
    required: ["cmd"],
    additionalProperties: false,
  },
};

/**
 * Input items as `GET /v1/responses/{id}/input_items` lists them: a tool output the client sent
 * without `status` is `completed`, as OpenAI's `ResponseItem` requires
 * (src/engine/response-object.ts `listedItems`).
 */
export function listed<T extends Record<string, unknown>>(items: readonly T[]): T[] {
  return items.map((item) =>
    item.type === "function_call_output" && !("status" in item) ? { ...item, status: "completed" } : item,
  );
}
