/**
 * The layer order of src/ (docs/architecture.md "Layers"), checked on the import graph: every
 * `import … from` / `export … from` / `import("…")` of a relative path under src/ (type-only
 * imports included: they couple the layers as much) goes to the same layer or a lower one, and
 * no file reaches itself through its imports (no import circles). Known violations another change
 * removes are listed by name, and the list must stay exact: once one is fixed, it is dropped here.
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const SRC = resolve(import.meta.dirname, "../../src");

/** Top to bottom; a folder may import its own layer and the ones after it. */
const LAYERS = [
  "worker",
  "session",
  "tenancy",
  "config",
  "webhooks",
  "http",
  "engine",
  "pipeline",
  "compaction",
  "safety",
  "resend",
  "context",
  "upstream",
  "store",
  "auth",
  "protocol",
  "secrets",
  "util",
  "crypto",
] as const;

/** Known exceptions to the layer order and to "no circles": none. */
const KNOWN_LAYER_VIOLATIONS: string[] = [];
const KNOWN_CYCLES: string[] = [];

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith(".ts") && !entry.name.endsWith(".d.ts") ? [path] : [];
  });
}

/** The src/-relative files `file` imports (relative specifiers that resolve to a .ts file of src/). */
function importsOf(file: string, known: ReadonlySet<string>): string[] {
  const text = readFileSync(file, "utf8");
  const specifiers = [
    ...text.matchAll(/^\s*(?:import|export)\b[^"';]*?\bfrom\s+["']([^"']+)["']/gms),
    ...text.matchAll(/^\s*import\s+["']([^"']+)["']/gm),
    ...text.matchAll(/\bimport\(\s*["']([^"']+)["']\s*\)/g),
  ].map((match) => match[1] ?? "");
  return specifiers
    .filter((specifier) => specifier.startsWith("."))
    .map((specifier) => relative(SRC, resolve(dirname(file), specifier)))
    .filter((path) => known.has(path));
}

/** The layer of a src/-relative path: its top folder (a file at the root, index.ts, is the entry). */
function layerOf(path: string): number {
  const folder = path.includes("/") ? path.slice(0, path.indexOf("/")) : null;
  if (folder === null) return -1;
  const index = (LAYERS as readonly string[]).indexOf(folder);
  if (index < 0) throw new Error(`src/${folder}/ is not in LAYERS (add it, and to docs/architecture.md)`);
  return index;
}

function graph(): Map<string, string[]> {
  const files = sourceFiles(SRC).map((file) => relative(SRC, file));
  const known = new Set(files);
  return new Map(files.map((file) => [file, importsOf(join(SRC, file), known)]));
}

/**
 * The circles a depth-first walk closes (one per back edge: none exactly when the graph has no
 * circle), each written from its smallest file.
 */
function cycles(edges: Map<string, string[]>): string[] {
  const found = new Set<string>();
  const onStack: string[] = [];
  const visiting = new Set<string>();
  const done = new Set<string>();
  const visit = (file: string) => {
    visiting.add(file);
    onStack.push(file);
    for (const next of edges.get(file) ?? []) {
      if (visiting.has(next)) {
        const circle = onStack.slice(onStack.indexOf(next));
        const start = circle.indexOf([...circle].sort()[0] ?? next);
        const rotated = [...circle.slice(start), ...circle.slice(0, start)];
        found.add([...rotated, rotated[0]].join(" -> "));
      } else if (!done.has(next)) {
        visit(next);
      }
    }
    onStack.pop();
    visiting.delete(file);
    done.add(file);
  };
  for (const file of [...edges.keys()].sort()) if (!done.has(file)) visit(file);
  return [...found].sort();
}

describe("src/ layers", () => {
  const edges = graph();

  it("reads the import graph (sanity: the Durable Object imports its parts)", () => {
    expect(edges.get("session/session-do.ts")).toContain("session/session-parts.ts");
    expect(edges.get("upstream/router.ts")?.length).toBeGreaterThan(0);
  });

  it("puts every folder of src/ in the layer order", () => {
    const folders = readdirSync(SRC, { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name)
      .sort();
    expect(folders).toEqual([...LAYERS].sort());
  });

  it("never imports from a higher layer (but for the known violations listed)", () => {
    const violations: string[] = [];
    for (const [file, imports] of edges) {
      for (const target of imports) {
        if (layerOf(target) < layerOf(file)) violations.push(`${file} -> ${target}`);
      }
    }
    expect(violations.sort()).toEqual([...KNOWN_LAYER_VIOLATIONS].sort());
  });

  it("has no import circles (but for the known ones listed)", () => {
    expect(cycles(edges)).toEqual([...KNOWN_CYCLES].sort());
  });
});

/**
 * One admission (issue #23 item 1, src/session/admission.ts): every call that reaches a model or
 * counts against a tenant is admitted there, so nothing else may ask the tenant gate
 * (`admit`, `resolveModel`: src/tenancy/tenant-gate.ts) or apply a client secret's binding or turn
 * count (`bindingRefusal`, `countSecretTurn`, `refundSecretTurn`). Read on the source text: a call
 * is `<receiver>.admit(` / `.resolveModel(` or a call of one of those functions by name.
 */
describe("one admission", () => {
  const ADMISSION = "session/admission.ts";
  /**
   * Receivers that are not the tenant gate: a socket's lanes, the admission itself, and `this`
   * (a class calling its own method: the gate inside itself, the transports' admission dependency).
   */
  const OTHER_RECEIVERS = new Set(["lanes", "admission", "this"]);
  const BINDING_RULES = ["bindingRefusal", "countSecretTurn", "refundSecretTurn"];

  /** `file: receiver.method(` / `file: function(` for every call the rule reserves to the admission. */
  function reservedCalls(): string[] {
    const calls: string[] = [];
    for (const path of sourceFiles(SRC)) {
      const file = relative(SRC, path);
      // Comments name these calls (documentation, not calls).
      const text = readFileSync(path, "utf8")
        .replace(/\/\*[\s\S]*?\*\//g, "")
        .replace(/\/\/.*$/gm, "");
      for (const match of text.matchAll(/(\w+)\s*\??\.\s*(admit|resolveModel)\s*\??\.?\s*\(/g)) {
        const [, receiver = "", method = ""] = match;
        if (OTHER_RECEIVERS.has(receiver) && (method === "admit" || receiver === "this")) continue;
        calls.push(`${file}: ${receiver}.${method}(`);
      }
      for (const name of BINDING_RULES) {
        for (const match of text.matchAll(new RegExp(`(function\\s+)?\\b${name}\\s*\\(`, "g"))) {
          if (!match[1]) calls.push(`${file}: ${name}(`);
        }
      }
    }
    return calls.sort();
  }

  it("asks the tenant gate and applies a secret's binding in src/session/admission.ts only", () => {
    const calls = reservedCalls();
    // Sanity: the rule sees the admission's own calls.
    expect(calls).toContain(`${ADMISSION}: gate.admit(`);
    expect(calls).toContain(`${ADMISSION}: bindingRefusal(`);
    expect(calls.filter((call) => !call.startsWith(`${ADMISSION}:`))).toEqual([]);
  });
});

describe("the session Durable Object's lifecycle", () => {
  // Its runtime handlers (wake, frame, close, alarm, deadlines) iterate the lifecycle parts
  // (src/session/lifecycle.ts) listed in session-parts.ts; a part with a lifecycle is added there,
  // never by editing session-do.ts. Entry points (RPC methods) still call the part they serve.
  it("names no lifecycle part in session-do.ts", () => {
    const text = readFileSync(resolve(SRC, "session/session-do.ts"), "utf8");
    const named = text.match(
      /parts\.(scopes|presence|store)\b|live\.detach|tenancy\.(released|flush|deadline)\b|recoverInterrupted|expireBefore/g,
    );
    expect(named ?? []).toEqual([]);
  });
});
