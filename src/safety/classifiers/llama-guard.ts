/**
 * Llama Guard 3 on Workers AI, through the `AI` binding, as a classifier. Llama Guard reads one
 * conversation and answers whether its last turn is safe, so a call classifies all its texts at
 * once: input texts as one user message, output texts as the assistant's reply to a neutral user
 * turn. Its hazard codes (`S1`…`S14`) are the categories. The answer is requested as JSON
 * (`response_format: json_object` → `{safe, categories}`); the plain-text form ("safe" /
 * "unsafe\nS1,S10") is read too.
 * Invariants: one binding call per classification; an answer of any other shape is
 * `ClassifierUnavailable`; a flagged answer is `combined` (it cannot be pinned on one text).
 * Source: https://developers.cloudflare.com/workers-ai/models/llama-guard-3-8b/
 */
import { isRecord } from "../../protocol/json.ts";
import { type Classifier, ClassifierUnavailable, type Direction, type Verdict } from "../classifier.ts";

/** The part of the Workers AI binding this classifier uses (`env.AI`). */
export interface AiBinding {
  run(model: string, inputs: Record<string, unknown>): Promise<unknown>;
}

/** The Workers AI model id of Llama Guard 3 8B. */
export const LLAMA_GUARD_MODEL = "@cf/meta/llama-guard-3-8b";

/** Separates texts inside the one message a call sends. */
const SEPARATOR = "\n\n---\n\n";

/** `{safe, categories}` from the model's answer, or null when it is neither documented form. */
export function parseLlamaGuard(response: unknown): { safe: boolean; categories: string[] } | null {
  if (isRecord(response) && typeof response.safe === "boolean") {
    const raw = Array.isArray(response.categories) ? response.categories : [];
    if (!raw.every((c) => typeof c === "string")) return null;
    return { safe: response.safe, categories: raw as string[] };
  }
  if (typeof response === "string") {
    const [first = "", second = ""] = response.trim().split("\n");
    if (first.trim() === "safe") return { safe: true, categories: [] };
    if (first.trim() === "unsafe") {
      const categories = second
        .split(",")
        .map((c) => c.trim())
        .filter((c) => /^S\d{1,2}$/.test(c));
      return { safe: false, categories };
    }
  }
  return null;
}

/** The Llama Guard classifier. */
export class LlamaGuardClassifier implements Classifier {
  readonly id: string;
  readonly model: string;
  readonly local = false;
  readonly combined = true;
  private readonly ai: AiBinding;

  constructor(ai: AiBinding, model = LLAMA_GUARD_MODEL) {
    this.ai = ai;
    this.model = model;
    this.id = `llama-guard:${model}`;
  }

  async classify(texts: readonly string[], direction: Direction, signal: AbortSignal): Promise<Verdict[]> {
    const joined = texts.join(SEPARATOR);
    const messages =
      direction === "input"
        ? [{ role: "user", content: joined }]
        : [
            { role: "user", content: "(conversation context omitted)" },
            { role: "assistant", content: joined },
          ];
    let answer: unknown;
    try {
      answer = await abortable(
        this.ai.run(this.model, { messages, response_format: { type: "json_object" } }),
        signal,
      );
    } catch (cause) {
      if (cause instanceof ClassifierUnavailable) throw cause;
      throw new ClassifierUnavailable("error", "The Workers AI call to Llama Guard failed.");
    }
    const parsed = parseLlamaGuard(isRecord(answer) ? answer.response : undefined);
    if (!parsed) throw new ClassifierUnavailable("unparseable", "Llama Guard answered an unknown shape.");
    const categories: Record<string, boolean> = {};
    const scores: Record<string, number> = {};
    for (const code of parsed.categories) {
      categories[code] = true;
      scores[code] = 1;
    }
    const verdict: Verdict = { flagged: !parsed.safe, categories, scores };
    return texts.map(() => verdict);
  }
}

/** `promise`, or a `timeout` rejection as soon as `signal` aborts (a binding call takes no signal). */
function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(new ClassifierUnavailable("timeout", "Llama Guard timed out."));
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(new ClassifierUnavailable("timeout", "Llama Guard timed out."));
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(error);
      },
    );
  });
}
