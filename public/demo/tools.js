// @ts-check
/**
 * The tools of the web agent page (public/demo/), executed in the browser: a sandbox shell over an
 * in-memory file system, and a calculator. Owns their definitions (sent with every
 * `response.create`) and their execution: a function call's `arguments` in, the text of its
 * `function_call_output` out.
 * Invariants: nothing here touches the network, the page or real files; a tool never throws — a
 * bad call (unknown tool, invalid JSON, bad command or expression) answers an `error: …` text the
 * model can read, as a shell would.
 */

/** @typedef {Map<string, string>} FileSystem  path → content (paths without a leading `/`) */

/** The `tools` of every request (Responses API function tools). */
export const TOOL_DEFINITIONS = [
  {
    type: "function",
    name: "exec_command",
    description:
      "Run a command in the page's sandbox shell over an in-memory project: ls [dir], cat FILE, head [-n N] FILE, wc FILE, grep WORD FILE, echo TEXT, pwd, calc EXPRESSION.",
    strict: false,
    parameters: {
      type: "object",
      properties: { cmd: { type: "string", description: "The command line." } },
      required: ["cmd"],
    },
  },
  {
    type: "function",
    name: "calculator",
    description: "Evaluate an arithmetic expression: numbers, + - * / % ^ and parentheses.",
    strict: false,
    parameters: {
      type: "object",
      properties: { expression: { type: "string", description: "For example (2 + 3) * 4." } },
      required: ["expression"],
    },
  },
];

/** Longest tool output sent back, in characters (a tool output stays a small request). */
const MAX_OUTPUT_CHARS = 4000;

/** A fresh copy of the sandbox's project. */
export function createFileSystem() {
  /** @type {FileSystem} */
  const fs = new Map();
  fs.set(
    "README.md",
    "# demo-project\n\nA tiny project living in the page's memory.\nRun `npm test` to test it (not really).\n",
  );
  fs.set("package.json", '{\n  "name": "demo-project",\n  "version": "1.0.0",\n  "type": "module"\n}\n');
  fs.set("src/math.js", "export const add = (a, b) => a + b;\nexport const mul = (a, b) => a * b;\n");
  fs.set("src/main.js", 'import { add } from "./math.js";\nconsole.log(add(2, 3));\n');
  fs.set(
    "notes/todo.txt",
    "- write more tests\n- measure latency per turn\n- resume after a dropped socket\n",
  );
  return fs;
}

/**
 * Runs one function call.
 * @param {string} name the call's `name`
 * @param {string} argumentsJson the call's `arguments` (JSON text)
 * @param {FileSystem} fs
 * @returns {string} the output for `function_call_output`
 */
export function runTool(name, argumentsJson, fs) {
  /** @type {unknown} */
  let args;
  try {
    args = JSON.parse(argumentsJson);
  } catch {
    return "error: the arguments are not valid JSON";
  }
  const field = (/** @type {string} */ key) =>
    typeof args === "object" && args !== null && key in args ? String(Reflect.get(args, key)) : null;
  let output;
  if (name === "exec_command") {
    const cmd = field("cmd") ?? field("command");
    output = cmd === null ? "error: missing `cmd`" : shell(cmd, fs);
  } else if (name === "calculator") {
    const expression = field("expression");
    output = expression === null ? "error: missing `expression`" : calculate(expression);
  } else {
    output = `error: unknown tool ${name}`;
  }
  return output.length > MAX_OUTPUT_CHARS ? `${output.slice(0, MAX_OUTPUT_CHARS)}\n…(truncated)` : output;
}

/**
 * One command line of the sandbox shell.
 * @param {string} line
 * @param {FileSystem} fs
 * @returns {string}
 */
export function shell(line, fs) {
  const words = line.trim().split(/\s+/).filter(Boolean);
  const [command, ...rest] = words;
  const read = (/** @type {string | undefined} */ path) => {
    if (!path) return { error: `${command}: missing file operand` };
    const key = normalize(path);
    const text = fs.get(key);
    return text === undefined ? { error: `${command}: ${path}: No such file or directory` } : { text };
  };
  switch (command) {
    case undefined:
      return "";
    case "pwd":
      return "/project";
    case "echo":
      return rest.join(" ");
    case "ls": {
      const dir = normalize(rest.find((word) => !word.startsWith("-")) ?? ".");
      const prefix = dir === "" ? "" : `${dir}/`;
      const names = new Set();
      for (const path of fs.keys()) {
        if (!path.startsWith(prefix)) continue;
        const [first, ...deeper] = path.slice(prefix.length).split("/");
        names.add(deeper.length > 0 ? `${first}/` : first);
      }
      if (names.size === 0) return `ls: ${dir}: No such file or directory`;
      return [...names].sort().join("\n");
    }
    case "cat": {
      const file = read(rest[0]);
      return "error" in file ? file.error : file.text;
    }
    case "head": {
      const count = rest[0] === "-n" ? Number(rest[1]) : 10;
      const file = read(rest[0] === "-n" ? rest[2] : rest[0]);
      if ("error" in file) return file.error;
      return file.text
        .split("\n")
        .slice(0, Number.isFinite(count) ? count : 10)
        .join("\n");
    }
    case "wc": {
      const file = read(rest[0]);
      if ("error" in file) return file.error;
      const lines = file.text.split("\n").length - (file.text.endsWith("\n") ? 1 : 0);
      const wordCount = file.text.split(/\s+/).filter(Boolean).length;
      return `${lines} ${wordCount} ${new TextEncoder().encode(file.text).length} ${rest[0]}`;
    }
    case "grep": {
      const [word, path] = rest;
      if (!word) return "grep: missing pattern";
      const file = read(path);
      if ("error" in file) return file.error;
      return file.text
        .split("\n")
        .filter((text) => text.includes(word))
        .join("\n");
    }
    case "calc":
      return calculate(rest.join(" "));
    default:
      return `${command}: command not found (try ls, cat, head, wc, grep, echo, pwd, calc)`;
  }
}

/** `./a/b/`, `/project/a/b`, `a/b` → `a/b`; `.` → ``. */
function normalize(/** @type {string} */ path) {
  return path
    .replace(/^\/project\/?/, "")
    .split("/")
    .filter((part) => part !== "" && part !== ".")
    .join("/");
}

/**
 * Evaluates an arithmetic expression without `eval`: a recursive-descent parser over numbers,
 * `+ - * / % ^` (right-associative power) and parentheses.
 * @param {string} expression
 * @returns {string} the value, or `error: …`
 */
export function calculate(expression) {
  const tokens = expression.match(/\d+(?:\.\d+)?|[-+*/%^()]|\S/g) ?? [];
  let at = 0;
  const peek = () => tokens[at];
  const take = () => tokens[at++];
  /** @returns {number} */
  const primary = () => {
    const token = take();
    if (token === "-") return -primary();
    if (token === "(") {
      const value = sum();
      if (take() !== ")") throw new Error("missing )");
      return value;
    }
    if (token !== undefined && /^\d/.test(token)) return Number(token);
    throw new Error(token === undefined ? "unexpected end" : `unexpected ${token}`);
  };
  /** @returns {number} */
  const power = () => {
    const base = primary();
    if (peek() !== "^") return base;
    take();
    return base ** power();
  };
  const product = () => {
    let value = power();
    for (let op = peek(); op === "*" || op === "/" || op === "%"; op = peek()) {
      take();
      const right = power();
      value = op === "*" ? value * right : op === "/" ? value / right : value % right;
    }
    return value;
  };
  const sum = () => {
    let value = product();
    for (let op = peek(); op === "+" || op === "-"; op = peek()) {
      take();
      const right = product();
      value = op === "+" ? value + right : value - right;
    }
    return value;
  };
  try {
    if (tokens.length === 0) return "error: empty expression";
    const value = sum();
    if (at < tokens.length) return `error: unexpected ${tokens[at]}`;
    return Number.isFinite(value) ? String(value) : "error: not a finite number";
  } catch (error) {
    return `error: ${error instanceof Error ? error.message : String(error)}`;
  }
}
