/**
 * One Responses turn, transport independent: validates the create params, resolves
 * `previous_response_id`, validates the context like OpenAI (input shape, tool pairing,
 * reasoning replay; input-rules.ts, pairing.ts, reasoning.ts), reads directives, runs the policy,
 * computes usage and timing against the prefix caches, and produces the timed event sequence
 * plus the chain node to keep once the turn completes. Used by the HTTP (SSE/JSON) and WS
 * transports.
 */
import type { ResponseOutputItem } from "openai/resources/responses/responses";
import { compactionItem, splitTrigger, validateCompactions } from "./compaction.ts";
import { functionTools, lastUserText, normalizeInput, type SimContext } from "./context.ts";
import { DEFAULT_DIRECTIVES, type Directives, parseDirectives } from "./directives.ts";
import { invalidRequest, previousResponseNotFound, simulatedFailure } from "./errors.ts";
import { buildEventSteps, type EventStep, outputTokens, toOutputItem } from "./events.ts";
import { newId } from "./ids.ts";
import { validateInputItems, validateInputPresence, validateSettings } from "./input-rules.ts";
import type { JsonObject } from "./json.ts";
import { validateToolPairing } from "./pairing.ts";
import { planTurn } from "./policy.ts";
import { contextSegments, type PrefixCache, segmentTokens } from "./prefix-cache.ts";
import { INCLUDE_ENCRYPTED, isNonReasoningModel, validateInclude } from "./reasoning.ts";
import type { RecordedRequest } from "./recorder.ts";
import { parseCreateParams } from "./request-schema.ts";
import { initialResponse, makeUsage, type WireResponse } from "./response-object.ts";
import type { SimState } from "./state.ts";
import type { ChainNode } from "./store.ts";
import { decodeMs, firstEventDelayMs } from "./timing.ts";

/** Reasoning tokens a `reasoning=1` turn reports (counted in `output_tokens`). */
const REASONING_TOKENS = 16;

/** Default model name reported when the request names none. */
export const DEFAULT_MODEL = "deltagate-sim";

/** How the transport resolves ids and which caches apply. */
export interface TurnEnvironment {
  /** Finds the chain node for a `previous_response_id`, or undefined. */
  resolvePrevious: (id: string) => ChainNode | undefined;
  /** Prefix caches consulted (max wins) and updated by this turn. */
  caches: PrefixCache[];
  /** True for WS (`generate:false` honoured, `background` rejected). */
  websocket: boolean;
}

/** A prepared turn, ready to be streamed. */
export interface PreparedTurn {
  /** Events with due times (ms after the request arrived); last one is terminal. */
  steps: EventStep[];
  /** The terminal Response object (also inside the last step). */
  final: WireResponse;
  /** Chain node to keep when the turn completes. */
  node: ChainNode;
  /** Whether the response is stored (`store` not false). */
  store: boolean;
  /** Directives in force (defaults for `generate:false`). */
  directives: Directives;
}

/**
 * Prepares a turn for `body` and fills the context fields of `record`. Throws a SimError for
 * invalid requests, unknown `previous_response_id`, pairing violations, and `fail=before` /
 * `fail=status:N` directives (recorded as `simulatedFailure: "before"`).
 */
export function prepareTurn(
  state: SimState,
  body: JsonObject,
  env: TurnEnvironment,
  record: RecordedRequest,
): PreparedTurn {
  const params = parseCreateParams(body);
  if (env.websocket && params.background === true) {
    throw invalidRequest("Background mode is not supported over WebSocket.", "background");
  }
  if (body.stream_id !== undefined) {
    throw invalidRequest(
      "The simulator does not support 'stream_id' lanes; use the default lane.",
      "stream_id",
    );
  }
  if (body.conversation !== undefined && body.conversation !== null) {
    throw invalidRequest("The simulator does not support 'conversation'.", "conversation");
  }
  const generate = !(env.websocket && params.generate === false);
  const prevId = params.previous_response_id ?? null;
  record.previousResponseId = prevId;
  const model = params.model ?? DEFAULT_MODEL;
  if (state.strict) {
    validateSettings(body);
    validateInclude(body, model);
    validateInputPresence(params.input, prevId !== null, generate);
  }
  // A trailing `compaction_trigger` asks for a compaction (compaction.ts); it is not kept.
  const { items: input, trigger } = splitTrigger(normalizeInput(params.input));
  record.inputItemCount = input.length;
  if (state.strict) validateInputItems(input);
  let history: JsonObject[] = [];
  if (prevId !== null) {
    const node = env.resolvePrevious(prevId);
    if (!node) throw previousResponseNotFound(prevId);
    history = node.items;
  }
  const items = [...history, ...input];
  record.contextItemCount = items.length;
  validateToolPairing(items, state.strict);
  const store = params.store !== false;
  if (state.strict) state.reasoning.validate(items, history.length, store);
  if (state.strict) validateCompactions(state.compactionSecret, items, history.length);

  const directives = generate ? parseDirectives(lastUserText(items)) : DEFAULT_DIRECTIVES;
  if (directives.fail?.kind === "before") {
    record.simulatedFailure = "before";
    throw simulatedFailure(directives.fail.status);
  }

  const ctx: SimContext = {
    items,
    tools: functionTools(params.tools),
    toolChoice: body.tool_choice,
    parallelToolCalls: params.parallel_tool_calls !== false,
    maxOutputTokens: params.max_output_tokens ?? null,
  };
  const plan = generate && !trigger ? planTurn(ctx, directives) : { items: [], truncated: false };
  const output: ResponseOutputItem[] = plan.items.map(toOutputItem);
  if (generate && trigger)
    output.push(compactionItem(state.compactionSecret, items) as unknown as ResponseOutputItem);
  const followingId = output[0]?.id;
  const reasons = directives.reasoning && !isNonReasoningModel(model);
  const reasoningTokens = reasons && followingId ? REASONING_TOKENS : 0;
  if (reasoningTokens > 0 && followingId) {
    const include = Array.isArray(body.include) && body.include.includes(INCLUDE_ENCRYPTED);
    const reasoning = state.reasoning.issue(followingId, store, include);
    output.unshift(reasoning as unknown as ResponseOutputItem);
  }

  const segments = contextSegments(params.tools, params.instructions, items);
  const inputTokens = generate ? segmentTokens(segments) : 0;
  const cached = generate
    ? Math.min(inputTokens, Math.max(0, ...env.caches.map((c) => c.cachedTokens(segments))))
    : 0;
  const outputItemsJson = output as unknown as JsonObject[];
  const remembered = contextSegments(params.tools, params.instructions, [...items, ...outputItemsJson]);
  for (const cache of env.caches) cache.remember(remembered);

  const initial = initialResponse(newId("resp_", 24), body, model);
  const usage = makeUsage(inputTokens, cached, outputTokens(output) + reasoningTokens, reasoningTokens);
  const steps = buildEventSteps({
    initial,
    output,
    finalStatus: plan.truncated ? "incomplete" : "completed",
    usage,
    firstEventAtMs: generate ? firstEventDelayMs(state.timing, inputTokens - cached, directives.delayMs) : 0,
    msPerToken: decodeMs(state.timing, 1),
    deltaChars: directives.deltaChars,
  });
  const last = steps[steps.length - 1]?.event;
  const final = last && "response" in last ? (last.response as WireResponse) : initial;
  return {
    steps,
    final,
    node: { id: initial.id, items: [...items, ...outputItemsJson], response: final },
    store,
    directives,
  };
}
