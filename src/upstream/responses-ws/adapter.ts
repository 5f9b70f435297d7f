/**
 * The Responses WebSocket-mode upstream (issue #4 §1, first bullet): one warm outbound socket per
 * session and route while the session is active, turns serialized on it (the upstream runs one
 * response at a time per connection, https://developers.openai.com/api/docs/guides/websocket-mode), each turn sent as the delta on top of the
 * upstream's own previous response id whenever the upstream still holds the parent on this
 * socket, else as the full context.
 *
 * Owns: the socket's lifetime (opened on demand or as soon as a client connects — `preconnect` —,
 * replaced before the 60-minute limit, closed with 1000 "idle" by the keep-warm policy of
 * client-presence.ts so the session Durable Object can hibernate — an open outbound socket and a
 * pending timer both keep it in memory,
 * https://developers.cloudflare.com/durable-objects/concepts/durable-object-lifecycle/ —, and
 * closed for good once `dispose`d, when the turns queued on it are done: the session's credential
 * for the route changed, src/upstream/router.ts), the turn queue, and transparent recovery.
 *
 * Recovery: every loss of upstream state before the response's first output event
 * (`previous_response_not_found`, `websocket_connection_limit_reached`, the socket closing or
 * erroring — including a 1009 "message too big" close and the workerd#6774 drop of an outbound
 * socket after a concurrent streaming fetch — or a failed send) is retried with the full context,
 * on a fresh socket when the old one is unusable, up to `MAX_ATTEMPTS` sends per turn. The client
 * sees nothing. Once output has been forwarded, a drop cannot be hidden without replaying events
 * the client already has, so it fails the stream with an `UpstreamError` (the engine turns it into
 * `response.failed`); the next turn then starts over with the full context on a new socket.
 *
 * Encrypted reasoning (encrypted-reasoning.ts): every generating frame asks for it; a model that
 * refuses the added `include` gets the frame again without it (one of the turn's attempts).
 *
 * Invariants: at most one socket (open or being opened) and one idle timer exist; no timer is
 * pending while no socket is open or while a turn is queued or running; a turn's queue slot is
 * released when the upstream is done with its response, whether or not the engine consumed every
 * event.
 */

import { utf8Length } from "../../protocol/size-limits.ts";
import { type ClientPresence, idleDeadline } from "../client-presence.ts";
import {
  addsEncryptedInclude,
  isIncludeRefusal,
  markStreamOrigin,
  rememberRefusal,
} from "../encrypted-reasoning.ts";
import type { Upstream, UpstreamError, UpstreamRequest, UpstreamStream } from "../upstream.ts";
import { createFrame } from "./create-frame.ts";
import { runAttempt } from "./turn-attempt.ts";
import { type ChainEntry, type SocketTarget, UpstreamSocket } from "./upstream-socket.ts";

/** Sends of one turn at most: the planned one plus two full-context resends. */
const MAX_ATTEMPTS = 3;

/** Socket age (ms) after which it is replaced before its next turn: OpenAI closes at 60 min (WebSocket mode guide). */
export const ROTATE_AFTER_MS = 55 * 60 * 1000;

/** Default idle time (ms) without a turn before a warm socket closes while no client is open (`UPSTREAM_IDLE_MS`). */
export const DEFAULT_UPSTREAM_IDLE_MS = 30_000;

/** Default quiet time (ms) after which a warm socket closes even though a client is open: 5 minutes. */
export const DEFAULT_KEEP_WARM_MS = 5 * 60 * 1000;

/** Configuration of the WebSocket-mode adapter. */
export interface ResponsesWsOptions {
  /** Base URL including `/v1`, http(s), no trailing slash (the socket is at `{baseUrl}/responses`). */
  baseUrl: string;
  /** Bearer token, or null. */
  apiKey: string | null;
  /**
   * Ms without a turn after which the socket is closed when no client socket of the session is
   * open (`UPSTREAM_IDLE_MS` or the route's `idle_ms`); see client-presence.ts.
   */
  idleMs: number;
  /** Quiet ms after which the socket is closed while a client is open (default `DEFAULT_KEEP_WARM_MS`). */
  keepWarmMs?: number;
  /** The session's client sockets; without it the socket closes `idleMs` after its last turn. */
  presence?: ClientPresence;
  /** Socket age in ms after which it is replaced before its next turn (default `ROTATE_AFTER_MS`). */
  rotateAfterMs?: number;
  /** Responses the upstream keeps per connection for continuation (default 1, as OpenAI's WebSocket mode). */
  cachedResponses?: number;
  /** `fetch` used for the upgrade (defaults to the global). */
  fetch?: typeof fetch;
  /** Clock in ms (defaults to `Date.now`). */
  now?: () => number;
}

/** The Responses WebSocket-mode upstream of one session and route. */
export class ResponsesWsUpstream implements Upstream {
  private readonly target: SocketTarget;
  private readonly idleMs: number;
  private readonly keepWarmMs: number;
  private readonly presence: ClientPresence | null;
  private readonly rotateAfterMs: number;
  private readonly capacity: number;
  private socket: UpstreamSocket | null = null;
  /** The socket being opened, shared by everyone who needs it meanwhile. */
  private connecting: Promise<UpstreamSocket> | null = null;
  /** When the socket was last used (a turn released it, or it opened), ms since the epoch. */
  private lastUseAt = 0;
  /** Resolves when the last queued turn released the socket. */
  private tail: Promise<void> = Promise.resolve();
  /** Turns queued or running. */
  private active = 0;
  private idleTimer: ReturnType<typeof setTimeout> | null = null;
  /** `dispose` was called: the socket closes once no turn is queued, and none is opened again. */
  private disposed = false;
  /** Stops listening to the session's client sockets (`dispose`). */
  private readonly unsubscribe: () => void;

  constructor(options: ResponsesWsOptions) {
    this.target = {
      baseUrl: options.baseUrl,
      apiKey: options.apiKey,
      fetch: options.fetch ?? ((input, init) => fetch(input, init)),
      now: options.now ?? Date.now,
    };
    this.idleMs = options.idleMs;
    this.keepWarmMs = options.keepWarmMs ?? DEFAULT_KEEP_WARM_MS;
    this.presence = options.presence ?? null;
    // A client opening or closing moves the idle deadline (its last close shortens it).
    this.unsubscribe =
      this.presence?.subscribe(() => {
        if (this.idleTimer === null) return;
        this.cancelIdle();
        this.armIdle();
      }) ?? (() => {});
    this.rotateAfterMs = options.rotateAfterMs ?? ROTATE_AFTER_MS;
    this.capacity = options.cachedResponses ?? 1;
  }

  /** @inheritdoc */
  open(request: UpstreamRequest, signal: AbortSignal): Promise<UpstreamStream> {
    return this.serialized((release) => this.start(request, signal, true, release));
  }

  /**
   * Sends the warm-up upstream as `generate:false` with the full context (instructions and tools
   * pre-loaded) and remembers its upstream id, so the first real turn chained on it goes
   * delta-only. Fire-and-forget: it takes its place in the turn queue, and a failure only means
   * that turn sends the full context.
   */
  prewarm(request: UpstreamRequest): void {
    const never = new AbortController().signal;
    this.serialized((release) => this.start(request, never, false, release))
      .then(async (stream) => {
        for await (const _event of stream.rest) {
          // drained: the warm-up's events are not forwarded anywhere
        }
      })
      .catch(() => {
        // nothing to report: the next turn falls back to the full context
      });
  }

  /**
   * Opens the socket now if none is open or being opened and no turn is queued (fire-and-forget:
   * a failure only means the first turn connects itself), then lets the idle policy run.
   */
  preconnect(): Promise<void> {
    if (this.disposed || this.active > 0 || this.socket?.isOpen) return Promise.resolve();
    return this.ready()
      .then(() => {
        this.armIdle();
        this.closeIfDisposed(); // disposed while it was being opened
      })
      .catch(() => {
        // the first turn will connect (and report) itself
      });
  }

  /**
   * Closes the socket as soon as the turns already queued released it (at once when none is), so
   * a socket opened with a credential the session no longer uses carries no further turn.
   */
  dispose(): void {
    this.disposed = true;
    this.unsubscribe();
    this.closeIfDisposed();
  }

  private closeIfDisposed(): void {
    if (!this.disposed || this.active > 0) return;
    this.cancelIdle();
    if (this.socket) this.retire(this.socket, "credential changed");
  }

  /** Runs `job` once every earlier turn released the socket; `job` must call `release` when done. */
  private serialized(job: (release: () => void) => Promise<UpstreamStream>): Promise<UpstreamStream> {
    this.active++;
    this.cancelIdle();
    let release: () => void = () => {};
    const released = new Promise<void>((resolve) => {
      let once = false;
      release = () => {
        if (once) return;
        once = true;
        this.active--;
        this.lastUseAt = this.target.now();
        resolve();
        this.armIdle();
        this.closeIfDisposed();
      };
    });
    const previous = this.tail;
    this.tail = previous.then(() => released);
    return previous
      .then(() => job(release))
      .catch((cause: unknown) => {
        release();
        throw cause;
      });
  }

  private async start(
    request: UpstreamRequest,
    signal: AbortSignal,
    generate: boolean,
    release: () => void,
  ): Promise<UpstreamStream> {
    const origin = this.target.baseUrl;
    let addInclude = addsEncryptedInclude(
      origin,
      request.model,
      request.settings.include ?? undefined,
      generate,
    );
    let refused = false;
    let lastError: UpstreamError | null = null;
    for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
      signal.throwIfAborted();
      const socket = await this.ready();
      request.onConnected?.(); // per-stage timing (src/pipeline/timing-stage.ts)
      // A socket forgets its chain on any state loss, so a resend always carries the full context.
      const parent = deltaParent(socket, request);
      const frame = createFrame(request, {
        parentUpstreamId: parent?.upstreamId ?? null,
        generate,
        addInclude,
        origin,
      });
      const contextItems = parent ? parent.items + request.newInput.length : request.input.length;
      const input = frame.input;
      const onSend = (text: string) =>
        request.onSent?.({ items: Array.isArray(input) ? input.length : 0, bytes: utf8Length(text) });
      const outcome = await runAttempt(
        socket,
        { frame, responseId: request.responseId, contextItems, onSend },
        signal,
      );
      if (outcome.kind === "opened") {
        if (refused) rememberRefusal(origin, request.model);
        void outcome.finished.then(release);
        return markStreamOrigin(outcome.stream, origin);
      }
      if (outcome.kind === "fail" && addInclude && isIncludeRefusal(outcome.error)) {
        addInclude = false;
        refused = true;
        lastError = outcome.error;
        continue;
      }
      if (outcome.kind === "fail") throw outcome.error;
      if (outcome.freshSocket) this.retire(socket, "upstream state lost");
      lastError = outcome.error;
    }
    throw lastError ?? new Error("unreachable: no attempt was made");
  }

  /**
   * The open socket, replacing it when closed or older than `rotateAfterMs`; a socket already
   * being opened (`preconnect`) is awaited, not opened twice.
   */
  private ready(): Promise<UpstreamSocket> {
    const current = this.socket;
    if (current?.isOpen && this.target.now() - current.openedAt < this.rotateAfterMs) {
      return Promise.resolve(current);
    }
    if (current) this.retire(current, "rotating before the connection limit");
    this.connecting ??= UpstreamSocket.connect(this.target, this.capacity, (gone) => {
      if (this.socket !== gone) return;
      this.socket = null;
      this.cancelIdle();
    })
      .then((socket) => {
        this.socket = socket;
        this.lastUseAt = this.target.now();
        return socket;
      })
      .finally(() => {
        this.connecting = null;
      });
    return this.connecting;
  }

  private retire(socket: UpstreamSocket, reason: string): void {
    if (this.socket === socket) this.socket = null;
    socket.close(reason);
    if (!this.socket) this.cancelIdle();
  }

  /** Starts the idle countdown (client-presence.ts) when nothing is queued and a socket is open. */
  private armIdle(): void {
    if (this.active > 0 || !this.socket || this.idleTimer !== null) return;
    const wait = Math.max(0, this.deadline() - this.target.now());
    this.idleTimer = setTimeout(() => {
      this.idleTimer = null;
      if (this.active > 0 || !this.socket) return;
      // Client activity may have moved the deadline since the timer was set.
      if (this.target.now() >= this.deadline()) this.retire(this.socket, "idle");
      else this.armIdle();
    }, wait);
  }

  private deadline(): number {
    const limits = { idleMs: this.idleMs, keepWarmMs: this.keepWarmMs };
    return idleDeadline(this.lastUseAt, limits, this.presence?.snapshot() ?? null);
  }

  private cancelIdle(): void {
    if (this.idleTimer === null) return;
    clearTimeout(this.idleTimer);
    this.idleTimer = null;
  }
}

/**
 * The parent to send the delta on top of: the upstream must hold it on `socket`, with exactly the
 * history Deltagate has for it (the context minus this turn's input). Anything else — first turn,
 * another socket, a fork to an older response, a parent the upstream got truncated
 * (`truncation: auto`) — goes as the full context.
 */
function deltaParent(socket: UpstreamSocket, request: UpstreamRequest): ChainEntry | null {
  const entry = socket.entryOf(request.previousResponseId);
  if (!entry) return null;
  return entry.items + request.newInput.length === request.input.length ? entry : null;
}
