/**
 * An OpenAI-compatible moderation endpoint (`POST {base}/moderations`) as a classifier: every text
 * of a call goes in one request (`input` as an array of strings; one result per string, in order).
 * Owns the request and the strict reading of the answer: anything but a 2xx JSON body with one
 * well-formed result per text is `ClassifierUnavailable`, never a verdict.
 * Invariants: the API key is sent only as a bearer token and never appears in an error message;
 * aborting `signal` (the timeout) cancels the request.
 * Source: https://platform.openai.com/docs/api-reference/moderations/create
 */
import { isRecord } from "../../protocol/json.ts";
import { type Classifier, ClassifierUnavailable, type Direction, type Verdict } from "../classifier.ts";

/** Where the moderation endpoint is. */
export interface ModerationEndpoint {
  /** Base URL including `/v1`, no trailing slash. */
  baseUrl: string;
  /** Bearer token, or null. */
  apiKey: string | null;
  /** Moderation model, e.g. `omni-moderation-latest`. */
  model: string;
  /** `fetch` to use (defaults to the global). */
  fetch?: typeof fetch;
}

/** One result of the answer as a verdict, or null when it is not a moderation result. */
function verdictOf(result: unknown): Verdict | null {
  if (!isRecord(result) || typeof result.flagged !== "boolean" || !isRecord(result.categories)) return null;
  const categories: Record<string, boolean> = {};
  for (const [name, hit] of Object.entries(result.categories)) {
    if (typeof hit !== "boolean") return null;
    categories[name] = hit;
  }
  const scores: Record<string, number> = {};
  if (isRecord(result.category_scores)) {
    for (const [name, score] of Object.entries(result.category_scores)) {
      if (typeof score === "number") scores[name] = score;
    }
  }
  return { flagged: result.flagged, categories, scores };
}

/** The OpenAI-compatible moderation classifier. */
export class ModerationClassifier implements Classifier {
  readonly id: string;
  readonly model: string;
  readonly local = false;
  readonly combined = false;
  private readonly endpoint: ModerationEndpoint;

  constructor(endpoint: ModerationEndpoint) {
    this.endpoint = endpoint;
    this.model = endpoint.model;
    this.id = `moderation:${endpoint.model}@${endpoint.baseUrl}`;
  }

  /** The same endpoint with another model (a request's `moderation.model`). */
  withModel(model: string): ModerationClassifier {
    return model === this.model ? this : new ModerationClassifier({ ...this.endpoint, model });
  }

  async classify(texts: readonly string[], _direction: Direction, signal: AbortSignal): Promise<Verdict[]> {
    const headers: Record<string, string> = { "content-type": "application/json" };
    if (this.endpoint.apiKey) headers.authorization = `Bearer ${this.endpoint.apiKey}`;
    let response: Response;
    try {
      response = await (this.endpoint.fetch ?? fetch)(`${this.endpoint.baseUrl}/moderations`, {
        method: "POST",
        headers,
        body: JSON.stringify({ model: this.model, input: texts }),
        signal,
      });
    } catch {
      if (signal.aborted) throw new ClassifierUnavailable("timeout", "The moderation request was aborted.");
      throw new ClassifierUnavailable("error", "The moderation endpoint could not be reached.");
    }
    if (!response.ok) {
      await response.body?.cancel();
      throw new ClassifierUnavailable("error", `The moderation endpoint answered HTTP ${response.status}.`);
    }
    let body: unknown;
    try {
      body = await response.json();
    } catch {
      throw new ClassifierUnavailable("unparseable", "The moderation endpoint answered something not JSON.");
    }
    const results = isRecord(body) && Array.isArray(body.results) ? body.results : null;
    const verdicts = results?.map(verdictOf) ?? [];
    if (!results || results.length !== texts.length || verdicts.some((v) => v === null)) {
      throw new ClassifierUnavailable(
        "unparseable",
        "The moderation endpoint's answer does not hold one result per input.",
      );
    }
    return verdicts as Verdict[];
  }
}
