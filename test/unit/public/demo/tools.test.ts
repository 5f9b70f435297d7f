/**
 * The web agent page's tools (public/demo/tools.js), run in Node: the sandbox shell over its
 * in-memory project and the calculator answer what a shell and a calculator would, and a bad call
 * answers an `error: …` text instead of throwing (the page sends it back as the tool output).
 */
import { describe, expect, it } from "vitest";
import {
  calculate,
  createFileSystem,
  runTool,
  shell,
  TOOL_DEFINITIONS,
} from "../../../../public/demo/tools.js";

describe("web agent page tools", () => {
  it("runs shell commands over the in-memory project", () => {
    const fs = createFileSystem();
    expect(shell("ls", fs).split("\n")).toEqual(["README.md", "notes/", "package.json", "src/"]);
    expect(shell("ls src", fs)).toBe("main.js\nmath.js");
    expect(shell("cat ./src/main.js", fs)).toContain('import { add } from "./math.js";');
    expect(shell("head -n 1 README.md", fs)).toBe("# demo-project");
    expect(shell("wc notes/todo.txt", fs)).toBe("3 15 78 notes/todo.txt");
    expect(shell("grep latency notes/todo.txt", fs)).toBe("- measure latency per turn");
    expect(shell("calc (2 + 3) * 4", fs)).toBe("20");
    expect(shell("cat nope.txt", fs)).toBe("cat: nope.txt: No such file or directory");
    expect(shell("rm -rf /", fs)).toMatch(/^rm: command not found/);
  });

  it("calculates without eval, with precedence and errors as text", () => {
    expect(calculate("1 + 2 * 3 ^ 2")).toBe("19");
    expect(calculate("2 ^ 3 ^ 2")).toBe("512");
    expect(calculate("-(4 - 10) % 4")).toBe("2");
    expect(calculate("1 / 0")).toBe("error: not a finite number");
    expect(calculate("2 +")).toBe("error: unexpected end");
    expect(calculate("alert(1)")).toBe("error: unexpected a");
    expect(calculate("")).toBe("error: empty expression");
  });

  it("answers every function call, a bad one with an error text", () => {
    const fs = createFileSystem();
    expect(TOOL_DEFINITIONS.map((tool) => tool.name)).toEqual(["exec_command", "calculator"]);
    expect(runTool("exec_command", '{"cmd":"pwd"}', fs)).toBe("/project");
    expect(runTool("calculator", '{"expression":"6*7"}', fs)).toBe("42");
    expect(runTool("exec_command", "{not json", fs)).toBe("error: the arguments are not valid JSON");
    expect(runTool("exec_command", "{}", fs)).toBe("error: missing `cmd`");
    expect(runTool("browse", "{}", fs)).toBe("error: unknown tool browse");
  });
});
