/**
 * Response chain state: a chain node is what `previous_response_id` resolves to (the full item
 * history up to and including that response's output). `ResponseStore` is the process-wide
 * map of responses created with `store` not false; a small `ResponseStore` is the per-WebSocket
 * cache of the most recent responses (works with `store:false`, spec §4.2).
 */
import type { JsonObject } from "./json.ts";
import type { WireResponse } from "./response-object.ts";

/** One response as a chain node. */
export interface ChainNode {
  /** `resp_…` id. */
  id: string;
  /** history(previous) + this request's input items + this response's output items. */
  items: JsonObject[];
  /** Final Response object (terminal status, with usage). */
  response: WireResponse;
}

/** Bounded map id → ChainNode, oldest inserted evicted first. */
export class ResponseStore {
  readonly #nodes = new Map<string, ChainNode>();
  readonly #capacity: number;

  /** `capacity` = maximum responses kept (default 10 000). */
  constructor(capacity = 10_000) {
    this.#capacity = capacity;
  }

  /** The node for `id`, or undefined. */
  get(id: string): ChainNode | undefined {
    return this.#nodes.get(id);
  }

  /** Adds or replaces `node`, evicting the oldest entries beyond capacity. */
  put(node: ChainNode): void {
    this.#nodes.delete(node.id);
    this.#nodes.set(node.id, node);
    while (this.#nodes.size > this.#capacity) {
      const oldest = this.#nodes.keys().next().value;
      if (oldest === undefined) break;
      this.#nodes.delete(oldest);
    }
  }

  /** Removes `id`; returns whether it was present. */
  delete(id: string): boolean {
    return this.#nodes.delete(id);
  }
}

/** Default number of responses a WS connection keeps (OpenAI guarantees only the latest). */
export const DEFAULT_CONNECTION_CACHE_SIZE = 1;
