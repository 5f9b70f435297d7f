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
