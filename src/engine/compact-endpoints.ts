/**
 * The unary context endpoints of a session Durable Object: `POST /v1/responses/compact` and
 * `POST /v1/responses/input_tokens` (one RPC method each; the Worker routes and validates them).
 * Owns how each is served for a model, by its first route's setting (src/upstream/routes.ts):
 * - `upstream`: the request goes to the route's `/responses/compact` or `/responses/input_tokens`
 *   with the full context (Deltagate's ids mean nothing upstream; Deltagate's own compaction items
 *   expanded), and the upstream's answer comes back as is; an upstream that answers 404 or 405
 *   (it has no such endpoint) is served as below instead;
 * - `deltagate`, compact: the route's model summarizes the context (src/compaction/summarizer.ts);
 *   the output is the context's user messages followed by one `compaction` item whose
 *   `encrypted_content` is the sealed summary — OpenAI's shape ("a list of all user messages,
 *   followed by a single compaction item");
 * - `deltagate`, input_tokens: Deltagate's count with its tokenizer (`o200k_base`, bounded per
 *   byte: src/context/bounded-count.ts) of what a turn would send: instructions, tools and the
 *   context's items — the same count a turn's usage falls back to (src/context/usage.ts).
 * Nothing is stored by either. The context is resolved exactly as a turn's (`previous_response_id`
 * visible over HTTP: store:true only). Both are admitted first by the session's one admission
 * (src/session/admission.ts: compact as a turn, input_tokens as a count); every call either makes to an
 * upstream leaves through the session's router (src/upstream/router.ts: the tenant's own key, the
 * route's model rewrite) and is metered to the key that made it (`UsageMeter`: opened before the
 * first upstream call, booked once with how it ended — a restart's included — settling what the
 * compact's admission reserved of `tokens_per_day`, which it gives back however it ends); one that
 * reaches no upstream (Deltagate's own token count) is not metered.
 * Source: https://platform.openai.com/docs/api-reference/responses/compact,
 *   https://platform.openai.com/docs/api-reference/responses/input-tokens
 */

import { retainedUserMessage, splitTrigger } from "../compaction/compaction-items.ts";
import { expandCompactions, openCompactions } from "../compaction/compaction-keyring.ts";
import { type CompactionKeys, sealToken } from "../compaction/compaction-token.ts";
import { COMPACTION_PROMPT, summarize, summaryInput } from "../compaction/summarizer.ts";
import { EMPTY_CONTEXT, turnContext } from "../context/counted-context.ts";
import { itemTokens, SettingsTokenMemo } from "../context/item-tokens.ts";
import { loadTokenizer } from "../context/tokenizer.ts";
import { compactionUnavailable } from "../pipeline/compaction-stage.ts";
import type { PreparedTurn } from "../pipeline/stage.ts";
import { TurnTimer } from "../pipeline/turn-timer.ts";
import type { CompactRequest, InputTokensRequest } from "../protocol/compact-request.ts";
import { ApiError, invalidRequest } from "../protocol/errors.ts";
import type { StoredItem } from "../protocol/items.ts";
import { isRecord, type Json, type JsonObject } from "../protocol/json.ts";
import { adjacentToolOutputs } from "../protocol/tool-calls.ts";
import { toUpstreamItems } from "../upstream/item-conversion.ts";
import type { UpstreamRoute } from "../upstream/routes.ts";
import { type Upstream, UpstreamError } from "../upstream/upstream.ts";
import { newItemId, newResponseId } from "../util/ids.ts";
import { conversationOf } from "./conversation-turns.ts";
import { ZERO_USAGE } from "./response-object.ts";
import type { TurnEngine, TurnReservation } from "./turn-engine.ts";
import { inputItems } from "./turn-input.ts";

/** The usage ledger's side of a metered call (src/tenancy/session-tenancy.ts). */
export interface UsageMeter {
  /** The call is about to reach an upstream (a restart from here on still books it). */
  started(id: string, model: string, keyId: string): void;
  /**
   * The call ended: booked once, with its usage (a Responses `usage` object) when it has one,
   * settling `reservation` (src/tenancy/tenant-gate.ts) in the same step.
   */
  ended(
    id: string,
    keyId: string,
    model: string,
    status: string,
    usage: unknown,
    reservation?: TurnReservation | null,
  ): void;
}

/**
 * What the session's one admission answered for the call (src/session/admission.ts `Admitted`):
 * the key that made it and what it reserved of `tokens_per_day`.
 */
export interface AdmittedCall {
  keyId: string;
  reservation: TurnReservation | null;
  /** Gives the reservation back (a booked call's usage already settled it). */
  release(): void;
}

/** Collaborators of the endpoints. */
export interface CompactEndpointsDeps {
  engine: TurnEngine;
  /** The keys of Deltagate's compaction items (a promise: they may be derived, src/config/root-secret.ts). */
  keys: Promise<CompactionKeys>;
  /** The first route serving `model`, or null (src/upstream/router.ts `routeFor`). */
  routeFor(model: string): UpstreamRoute | null;
  /**
   * A unary call to `model`'s first route through the session's router (router.ts `unary`: the
   * tenant's own key, the route's model rewrite). @throws {ApiError} 400 `model_not_found`.
   */
  unary(model: string, path: string, build: (route: UpstreamRoute) => JsonObject): Promise<unknown>;
  meter: UsageMeter;
  /** A turn's upstream wrapped by every stage (src/pipeline/pipeline.ts). @throws {ApiError} a stage's refusal. */
  turnUpstream(turn: PreparedTurn): Promise<Upstream>;
  /** Hex id of the Durable Object (response ids, the default `prompt_cache_key`). */
  ownerId: string;
  /** A new HTTP scope id, under which the context is resolved as a turn's (src/session/scope.ts). */
  newScopeId(): string;
  now(): number;
}

const NEVER_ABORTED = new AbortController().signal;

/** An `UpstreamError` as the client sees it (the session's renderer redacts its message). */
function asApi(cause: unknown): unknown {
  if (!(cause instanceof UpstreamError)) return cause;
  return new ApiError(cause.status, {
    type: cause.type,
    code: cause.code,
    message: cause.message,
    param: cause.param,
  });
}

/** True for an upstream answer that says the endpoint does not exist there. */
function lacksEndpoint(cause: unknown): boolean {
  return cause instanceof UpstreamError && (cause.status === 404 || cause.status === 405);
}

/** The unary context endpoints of one session. */
export class CompactEndpoints {
  private readonly deps: CompactEndpointsDeps;
  private readonly settings = new SettingsTokenMemo();

  constructor(deps: CompactEndpointsDeps) {
    this.deps = deps;
  }

  /** history(previous response) + the request's input, as a turn would see them (trigger dropped). */
  private async context(
    previousResponseId: string | null | undefined,
    input: CompactRequest["input"],
    tenant: string,
    held: readonly StoredItem[] = [],
  ): Promise<{ items: StoredItem[]; inputStart: number }> {
    const scope = { connId: this.deps.newScopeId(), tenant };
    // Item references become the items they name, as for a turn (src/resend/item-references.ts).
    const own = this.deps.engine.resolveReferences(
      splitTrigger(inputItems({ input: input ?? [] })).items,
      scope,
    );
    const history = await this.deps.engine.historyFor(previousResponseId ?? null, own, scope);
    return { items: [...held, ...history, ...own], inputStart: held.length + history.length };
  }

  private route(model: string): UpstreamRoute {
    const route = this.deps.routeFor(model);
    if (!route) {
      throw new ApiError(400, {
        type: "invalid_request_error",
        code: "model_not_found",
        message: `The model '${model}' does not exist or is not routed by this Deltagate.`,
        param: "model",
      });
    }
    return route;
  }

  /**
   * Runs `call` metered as `id` to `keyId`: opened before, booked once after with its status and
   * the usage `usageOf` reads from its answer, settling `reservation`.
   */
  private async metered<T>(
    id: string,
    model: string,
    keyId: string,
    call: () => Promise<T>,
    usageOf: (answer: T) => unknown,
    reservation: TurnReservation | null = null,
  ): Promise<T> {
    this.deps.meter.started(id, model, keyId);
    let answer: T;
    try {
      answer = await call();
    } catch (cause) {
      this.deps.meter.ended(id, keyId, model, "failed", null, reservation);
      throw cause;
    }
    this.deps.meter.ended(id, keyId, model, "completed", usageOf(answer), reservation);
    return answer;
  }

  /**
   * `POST /v1/responses/compact` (admitted: `request.model` is the admitted model).
   * @param admitted its admission: the key that made it (the usage ledger's key) and what it
   *   reserved, settled by its usage or, when it ends before reaching an upstream, given back.
   */
  async compact(request: CompactRequest, tenant: string, admitted: AdmittedCall): Promise<Response> {
    try {
      return await this.compactAdmitted(request, tenant, admitted);
    } finally {
      admitted.release(); // a compact that ended unbooked (a booked one settled it)
    }
  }

  private async compactAdmitted(
    request: CompactRequest,
    tenant: string,
    admitted: AdmittedCall,
  ): Promise<Response> {
    const { keyId, reservation } = admitted;
    const route = this.route(request.model);
    const { items, inputStart } = await this.context(request.previous_response_id, request.input, tenant);
    if (items.length === 0) {
      throw invalidRequest(
        "Nothing to compact: send `input` or `previous_response_id`.",
        "input",
        "empty_array",
      );
    }
    const opened = await openCompactions(items, inputStart, tenant, await this.deps.keys, route.compaction);
    const sent = expandCompactions(items, opened);
    if (route.compaction !== "upstream" && (await this.deps.keys).secrets.length === 0) {
      throw compactionUnavailable();
    }
    const id = newResponseId(this.deps.ownerId);
    try {
      const answer = await this.metered(
        id,
        request.model,
        keyId,
        async () => {
          if (route.compaction === "upstream") {
            try {
              return await this.compactUpstream(request, sent);
            } catch (cause) {
              if (!lacksEndpoint(cause)) throw cause;
            }
          }
          return this.compactOwn(id, request, items, tenant);
        },
        (answer) => (isRecord(answer) ? answer.usage : null),
        reservation,
      );
      return Response.json(answer);
    } catch (cause) {
      throw asApi(cause);
    }
  }

  private compactUpstream(request: CompactRequest, items: readonly StoredItem[]): Promise<unknown> {
    return this.deps.unary(request.model, "/responses/compact", (route) => ({
      input: toUpstreamItems(adjacentToolOutputs(items), {
        origin: route.baseUrl,
        resolvesIds: false,
      }) as unknown as Json[],
      ...(request.instructions ? { instructions: request.instructions } : {}),
      prompt_cache_key: request.prompt_cache_key ?? this.deps.ownerId,
    }));
  }

  private async compactOwn(
    id: string,
    request: CompactRequest,
    items: readonly StoredItem[],
    tenant: string,
  ): Promise<Record<string, Json>> {
    if ((await this.deps.keys).secrets.length === 0) throw compactionUnavailable();
    // The summarization runs as a turn through the stages (src/pipeline/): the context window,
    // safety checks of its input and of the summary, the compaction stage (which expands the
    // context's own compaction items), retries and fallback. Nothing of it is stored.
    const input = summaryInput(items, request.instructions ?? null);
    const turn: PreparedTurn = {
      responseId: id,
      request: { model: request.model, input, instructions: COMPACTION_PROMPT, store: false },
      context: turnContext(id, EMPTY_CONTEXT, input),
      timer: new TurnTimer(),
    };
    const summary = await summarize(
      await this.deps.turnUpstream(turn),
      {
        model: request.model,
        input,
        responseId: id,
        sessionKey: this.deps.ownerId,
        promptCacheKey: request.prompt_cache_key ?? null,
      },
      NEVER_ABORTED,
    );
    const createdAt = Math.floor(this.deps.now() / 1000);
    const payload = {
      v: 1 as const,
      summary: summary.text,
      model: request.model,
      created_at: createdAt,
      window: false,
    };
    const compaction = {
      id: newItemId("compaction"),
      type: "compaction",
      encrypted_content: await sealToken(payload, tenant, await this.deps.keys),
    };
    const users = items.filter(
      (item) => item.type === "message" && (item as { role?: unknown }).role === "user",
    );
    const output = [...users.map(retainedUserMessage), compaction] as unknown as Json[];
    const usage = summary.usage ?? ZERO_USAGE; // the usage stage fills a missing one
    return { id, object: "response.compaction", created_at: createdAt, output, usage };
  }

  /**
   * `POST /v1/responses/input_tokens` (admitted: `request.model` is the admitted model).
   * @param keyId the key that made it (the usage ledger's key, when the call is forwarded).
   */
  async inputTokens(request: InputTokensRequest, tenant: string, keyId: string): Promise<Response> {
    // A conversation's items come first, as they would for a turn (conversation-turns.ts).
    const conversation = conversationOf(request); // 400 with previous_response_id
    const held = conversation === null ? [] : this.deps.engine.conversationItems(conversation);
    const route = request.model ? this.route(request.model) : null;
    const { items, inputStart } = await this.context(
      request.previous_response_id,
      request.input,
      tenant,
      held,
    );
    const mode = route?.inputTokens ?? "deltagate";
    const opened = await openCompactions(items, inputStart, tenant, await this.deps.keys, mode);
    const sent = expandCompactions(items, opened);
    if (route && request.model && mode === "upstream") {
      const { previous_response_id: _previous, input: _input, model: _model, ...rest } = request;
      const forwarded = async () => {
        const answer = await this.deps.unary(request.model ?? "", "/responses/input_tokens", (to) => ({
          ...(rest as JsonObject),
          input: toUpstreamItems(adjacentToolOutputs(sent), {
            origin: to.baseUrl,
            resolvesIds: false,
          }) as unknown as Json[],
        }));
        if (isRecord(answer) && typeof answer.input_tokens === "number") return answer;
        throw new UpstreamError(502, "upstream_error", "The upstream answered input_tokens without a count.");
      };
      // No tokens are booked: counting them generates nothing (the ledger counts the call).
      const id = newResponseId(this.deps.ownerId);
      try {
        return Response.json(await this.metered(id, request.model, keyId, forwarded, () => null));
      } catch (cause) {
        if (!lacksEndpoint(cause)) throw asApi(cause);
      }
    }
    const count = await loadTokenizer();
    let tokens = this.settings.tokens(request.instructions, request.tools, count);
    for (const item of sent) tokens += itemTokens(item, count);
    return Response.json({ object: "response.input_tokens", input_tokens: tokens });
  }
}
