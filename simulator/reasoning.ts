/**
 * Reasoning items: the ones the simulator issues (directive `reasoning=1`) and OpenAI's rules
 * for sending them back in `input`. Owns the ledger of issued reasoning (id, the id of the item
 * that followed it, its `encrypted_content`, whether its response was stored) and the checks.
 * Rules, with the public reports they come from (api.openai.com error bodies, `param: "input"`):
 * - a `reasoning` item must be directly followed by the model item it belongs to (an assistant
 *   message or a tool call), else `Item 'rs_…' of type 'reasoning' was provided without its
 *   required following item.` — https://github.com/continuedev/continue/issues/8933 (body),
 *   https://github.com/openclaw/openclaw/issues/1158 (reasoning last, or before a user message);
 *   a reasoning item resolved by its id (no `encrypted_content`) needs that item with the id it
 *   had: an assistant message sent without its id fails the same way —
 *   https://github.com/mastra-ai/mastra/issues/11103 (with `encrypted_content` the item carries
 *   its own state; clients such as Codex replay it with no ids at all);
 * - an item the server issued right after a reasoning item must come right after that reasoning:
 *   `Item 'fc_…' of type 'function_call' was provided without its required 'reasoning' item:
 *   'rs_…'.` — https://github.com/continuedev/continue/issues/10018,
 *   https://github.com/NousResearch/hermes-agent/pull/102282;
 * - a reasoning item sent by id only (no `encrypted_content`) resolves only against stored
 *   responses: 404 `Item with id 'rs_…' not found. Items are not persisted when \`store\` is set
 *   to false. Try again with \`store\` set to true, or remove this item from your input.` —
 *   https://github.com/router-for-me/CLIProxyAPI/issues/2381 (body),
 *   https://github.com/can1357/oh-my-pi/issues/41 (status 404);
 * - `encrypted_content` must be replayed byte-exact: anything the server did not issue is
 *   400 `The encrypted content gAAA…xyz= could not be verified.` (code
 *   `invalid_encrypted_content`, param null) — https://github.com/openai/codex/issues/8119;
 *   and it is bound to the id of the item it was issued on: under another id it is 400 `The
 *   encrypted content for item rs_… could not be verified. Reason: Encrypted content item_id did
 *   not match the target item id.` — https://github.com/maximhq/bifrost/issues/5186 (a gateway
 *   that replayed it under an id it made up), https://github.com/can1357/oh-my-pi/issues/290
 *   (without an id the content names its own item, as Codex replays it);
 * - `include: ["reasoning.encrypted_content"]` is what returns `encrypted_content` on output
 *   reasoning items; without it they carry none, so a `store: false` chain can only replay them
 *   by id, which fails as above — https://platform.openai.com/docs/guides/reasoning
 *   (encrypted reasoning items), https://platform.openai.com/docs/api-reference/responses/create
 *   (`include`);
 * - a model that does not reason refuses that `include`: 400 `Encrypted content is not supported
 *   with this model.` (`param: "include"`, code null) — body recorded from api.openai.com for
 *   gpt-4o in https://github.com/ShishirPatil/gorilla/issues/1148; the non-reasoning families
 *   (GPT-3.5, GPT-4, GPT-4o, GPT-4.1, the `-chat-latest` aliases) per
 *   https://github.com/NousResearch/hermes-agent/pull/24234 and
 *   https://github.com/pydantic/pydantic-ai/pull/3331. Such a model emits no reasoning item.
 */
import { randomBytes } from "node:crypto";
import { invalidRequest, SimError } from "./errors.ts";
import { newId } from "./ids.ts";
import type { JsonObject } from "./json.ts";

/** One reasoning item the simulator issued. */
interface Issued {
  /** The opaque `encrypted_content` it had (returned only when `include` asked for it). */
  encrypted: string;
  /** Id of the output item that followed it. */
  followingId: string;
  /** Its response was stored (`store` not false): resolvable by id. */
  stored: boolean;
}

/** Entries kept before the oldest are forgotten (bounded memory for long benchmark runs). */
const MAX_ENTRIES = 100_000;

/** The `include` value that returns `encrypted_content` on reasoning items. */
export const INCLUDE_ENCRYPTED = "reasoning.encrypted_content";

/**
 * True for a model id of OpenAI's non-reasoning families (see the module header), also behind a
 * router's prefix (`openai/gpt-4o`) or a test route's (`sim-ws-gpt-4o`).
 */
export function isNonReasoningModel(model: string): boolean {
  return /gpt-(3\.5|4)/.test(model) || model.endsWith("-chat-latest");
}

/**
 * Refuses `include: ["reasoning.encrypted_content"]` for a model that does not reason.
 * @throws {SimError} 400 with OpenAI's message, `param: "include"`.
 */
export function validateInclude(body: JsonObject, model: string): void {
  const include = Array.isArray(body.include) && body.include.includes(INCLUDE_ENCRYPTED);
  if (include && isNonReasoningModel(model)) {
    throw invalidRequest("Encrypted content is not supported with this model.", "include");
  }
}

/** Issued reasoning items, process-wide (ids and encrypted content are global at OpenAI too). */
export class ReasoningLedger {
  readonly #byId = new Map<string, Issued>();
  /** Issued `encrypted_content` → the id of the reasoning item it was issued on. */
  readonly #encrypted = new Map<string, string>();
  /** Item id → id of the reasoning item that preceded it when issued. */
  readonly #precededBy = new Map<string, string>();

  /**
   * A new reasoning item for an output whose next item has id `followingId`.
   * @param include whether the request asked for `reasoning.encrypted_content`.
   * @returns the wire item (with `encrypted_content` only when included).
   */
  issue(followingId: string, stored: boolean, include: boolean): JsonObject {
    const id = newId("rs_");
    const encrypted = `gAAAAA${randomBytes(48).toString("base64url")}==`;
    this.#byId.set(id, { encrypted, followingId, stored });
    this.#encrypted.set(encrypted, id);
    this.#precededBy.set(followingId, id);
    this.#trim();
    const item: JsonObject = { id, type: "reasoning", summary: [] };
    if (include) item.encrypted_content = encrypted;
    return item;
  }

  #trim(): void {
    while (this.#byId.size > MAX_ENTRIES) {
      const [oldest, entry] = this.#byId.entries().next().value ?? [];
      if (oldest === undefined || entry === undefined) return;
      this.#byId.delete(oldest);
      this.#encrypted.delete(entry.encrypted);
      this.#precededBy.delete(entry.followingId);
    }
  }

  /**
   * Checks the reasoning rules over `items` (the effective context, oldest first); the id and
   * `encrypted_content` look-ups apply to the request's own input, `items[inputStart…]`.
   * @param store the request's `store` (selects the wording of the not-found error).
   * @throws {SimError} on the first violation (see the module header).
   */
  validate(items: readonly JsonObject[], inputStart: number, store: boolean): void {
    items.forEach((item, index) => {
      const id = typeof item.id === "string" ? item.id : "";
      if (item.type !== "reasoning") {
        const reasoningId = id ? this.#precededBy.get(id) : undefined;
        const previous = items[index - 1];
        if (reasoningId && !(previous?.type === "reasoning" && previous.id === reasoningId)) {
          throw invalidRequest(
            `Item '${id}' of type '${String(item.type)}' was provided without its required 'reasoning' item: '${reasoningId}'.`,
            "input",
          );
        }
        return;
      }
      const issued = id ? this.#byId.get(id) : undefined;
      const byId = issued !== undefined && typeof item.encrypted_content !== "string";
      const next = items[index + 1];
      if (!next || !isModelItem(next) || (byId && next.id !== issued.followingId)) {
        throw invalidRequest(
          `Item '${id}' of type 'reasoning' was provided without its required following item.`,
          "input",
        );
      }
      if (index < inputStart) return;
      if (typeof item.encrypted_content === "string") {
        const issuedOn = this.#encrypted.get(item.encrypted_content);
        if (issuedOn === undefined) throw notVerified(item.encrypted_content);
        if (id && id !== issuedOn) throw idMismatch(id);
      } else if (id && !issued?.stored) {
        throw itemNotFound(id, store);
      }
    });
  }
}

/** True for an item the model produces: an assistant message or a tool call (`*_call`). */
function isModelItem(item: JsonObject): boolean {
  const type = typeof item.type === "string" ? item.type : "";
  if (type === "message") return item.role === "assistant";
  return type.endsWith("_call") || type === "mcp_list_tools" || type === "mcp_approval_request";
}

function notVerified(encrypted: string): SimError {
  const shown = `${encrypted.slice(0, 4)}...${encrypted.slice(-4)}`;
  return new SimError(
    400,
    "invalid_request_error",
    `The encrypted content ${shown} could not be verified.`,
    "invalid_encrypted_content",
  );
}

function idMismatch(id: string): SimError {
  return new SimError(
    400,
    "invalid_request_error",
    `The encrypted content for item ${id} could not be verified. Reason: Encrypted content item_id did not match the target item id.`,
    "invalid_encrypted_content",
  );
}

function itemNotFound(id: string, store: boolean): SimError {
  const hint = store
    ? ""
    : " Items are not persisted when `store` is set to false. Try again with `store` set to true, or remove this item from your input.";
  return new SimError(404, "invalid_request_error", `Item with id '${id}' not found.${hint}`, null, "input");
}
