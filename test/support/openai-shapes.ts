/**
 * Checks answers Deltagate really sent against the `openai` package's TypeScript types, by the
 * TypeScript compiler itself: each sample becomes `const sample_N: T = <its JSON>;` in a source
 * file held in memory (never written), compiled with the repository's strictness
 * (`strict`, `exactOptionalPropertyTypes`, `noUncheckedIndexedAccess`) against
 * node_modules/openai. A required field missing, or a field of the wrong type or value, is a
 * diagnostic naming the sample. A field the type does not declare is allowed (`Open<T>`), as
 * OpenAI's OpenAPI schemas allow it: OpenAI itself sends fields its SDK types leave out (`store`
 * on a Response). Nothing is copied from the types: an `openai` upgrade changes what is checked.
 *
 * Deliberate differences, each with its reason (docs/protocol.md "Open Responses conformance" and issue #25),
 * are taken off a Response object before the check (`asOpenAIShows`):
 * - `presence_penalty`, `frequency_penalty`: required by the Open Responses `ResponseResource`,
 *   not among OpenAI's Response fields;
 * - `user: null` and `usage: null`: OpenAI's own examples send them, its types say `user?: string`
 *   and `usage?: ResponseUsage`.
 * And `output_text`, which the SDK computes on the client (`addOutputText`) and the API never
 * sends, is added as the SDK adds it.
 */
import { dirname, join } from "node:path";
import ts from "typescript";
import { REPO_ROOT } from "../../scripts/local-stack.ts";

/** The types a sample may be checked against (imported into the generated source). */
export const SHAPE_TYPES = {
  Response: `import("openai/resources/responses/responses").Response`,
  ResponseStreamEvent: `import("openai/resources/responses/responses").ResponseStreamEvent`,
  ResponsesServerEvent: `import("openai/resources/responses/responses").ResponsesServerEvent`,
  ResponseItemList: `import("openai/resources/responses/input-items").ResponseItemList`,
  ErrorEnvelope: `{ error: import("openai/resources/shared").ErrorObject }`,
  /**
   * `DELETE /v1/responses/{id}`: the SDK's `delete` returns `void`, so the shape is the API
   * reference's (https://platform.openai.com/docs/api-reference/responses/delete).
   */
  ResponseDeleted: `{ id: string; object: "response"; deleted: true }`,
  Conversation: `import("openai/resources/conversations/conversations").Conversation`,
  ConversationDeleted: `import("openai/resources/conversations/conversations").ConversationDeletedResource`,
  ConversationItem: `import("openai/resources/conversations/items").ConversationItem`,
  ConversationItemList: `import("openai/resources/conversations/items").ConversationItemList`,
} as const;

/** A type name of `SHAPE_TYPES`. */
export type ShapeType = keyof typeof SHAPE_TYPES;

/** One answer to check. */
export interface ShapeSample {
  /** What it is (named in a failure). */
  name: string;
  type: ShapeType;
  value: unknown;
}

/** Response fields Deltagate sends on purpose that OpenAI's type does not declare (see above). */
const EXTRA_RESPONSE_FIELDS = ["presence_penalty", "frequency_penalty"];
/** Response fields OpenAI's examples send as null where its type declares them optional. */
const NULL_AS_ABSENT = ["user", "usage"];

/** `value` with every Response object in it as the SDK's type describes it (see the header). */
export function asOpenAIShows(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(asOpenAIShows);
  if (typeof value !== "object" || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(value)) out[key] = asOpenAIShows(field);
  if (out.object !== "response" || !Array.isArray(out.output)) return out;
  for (const key of EXTRA_RESPONSE_FIELDS) delete out[key];
  for (const key of NULL_AS_ABSENT) if (out[key] === null) delete out[key];
  out.output_text = outputText(out.output);
  return out;
}

/** The SDK's `output_text`: every `output_text` part of every message, joined. */
function outputText(output: unknown[]): string {
  const texts: string[] = [];
  for (const item of output as { type?: string; content?: { type?: string; text?: string }[] }[]) {
    if (item.type !== "message") continue;
    for (const part of item.content ?? []) if (part.type === "output_text") texts.push(part.text ?? "");
  }
  return texts.join("");
}

/** The source file checked (in memory; its directory makes `openai` resolve from node_modules). */
const SOURCE = join(REPO_ROOT, "test", "support", "__openai_shapes__.ts");

const OPTIONS: ts.CompilerOptions = {
  strict: true,
  exactOptionalPropertyTypes: true,
  noUncheckedIndexedAccess: true,
  noEmit: true,
  skipLibCheck: true,
  target: ts.ScriptTarget.ES2022,
  module: ts.ModuleKind.ESNext,
  moduleResolution: ts.ModuleResolutionKind.Bundler,
  types: [],
};

/** The generated source: one typed constant per sample. */
export function shapesSource(samples: readonly ShapeSample[]): string {
  const open =
    "type Open<T> = unknown extends T ? T : T extends string | number | boolean | null | undefined ? T : T extends readonly (infer U)[] ? Open<U>[] : { [K in keyof T]: Open<T[K]> } & { [key: string]: unknown };\n";
  const constants = samples.map((sample, index) => {
    const json = JSON.stringify(asOpenAIShows(sample.value), null, 1);
    const type = SHAPE_TYPES[sample.type];
    return `// ${sample.name.replaceAll("\n", " ")}\nexport const sample_${index}: Open<${type}> = ${json};\n`;
  });
  return open + constants.join("\n");
}

/**
 * The parsed library files (TypeScript's `lib.*.d.ts`, the `openai` package's declarations), kept
 * for the next check: they do not change within a run, and parsing them again was most of a
 * check's time. Only the generated source is new each time.
 */
const LIBRARY_FILES = new Map<string, ts.SourceFile>();

/**
 * The type errors of `samples`, each naming its sample, or `[]` when every one is an instance of
 * its type.
 */
export function shapeErrors(samples: readonly ShapeSample[]): string[] {
  const source = shapesSource(samples);
  const host = ts.createCompilerHost(OPTIONS);
  const read = host.readFile.bind(host);
  const exists = host.fileExists.bind(host);
  const get = host.getSourceFile.bind(host);
  host.readFile = (name) => (name === SOURCE ? source : read(name));
  host.fileExists = (name) => name === SOURCE || exists(name);
  host.getSourceFile = (name, language, ...rest) => {
    if (name === SOURCE) return ts.createSourceFile(name, source, language);
    const known = LIBRARY_FILES.get(name);
    if (known) return known;
    const parsed = get(name, language, ...rest);
    if (parsed) LIBRARY_FILES.set(name, parsed);
    return parsed;
  };
  host.getCurrentDirectory = () => dirname(SOURCE);
  const program = ts.createProgram([SOURCE], OPTIONS, host);
  const file = program.getSourceFile(SOURCE);
  const starts = samples.map((_, index) => source.indexOf(`export const sample_${index}:`));
  return ts.getPreEmitDiagnostics(program).map((diagnostic) => {
    const text = ts.flattenDiagnosticMessageText(diagnostic.messageText, "\n");
    if (!diagnostic.file || diagnostic.file !== file || diagnostic.start === undefined) return text;
    const start = diagnostic.start;
    const index = starts.findLastIndex((at) => at >= 0 && at <= start);
    const { line } = diagnostic.file.getLineAndCharacterOfPosition(start);
    const sample = samples[index];
    return `${sample ? `${sample.name} (${sample.type})` : "source"}, line ${line + 1}: ${text}`;
  });
}
