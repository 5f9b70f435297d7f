// @ts-check
/**
 * The web agent page's connection to Deltagate (public/demo/): a client secret from the demo
 * backend route, a WebSocket authenticated with it the way browsers must, reconnection and
 * resumption. Owns:
 * - the client secret: minted by `POST /demo/client_secret` (development only; a real app's own
 *   backend mints with `POST /v1/client_secrets` and its tenant key), first for a fresh session,
 *   then always for that same session — renewed before a connect when it is about to expire, and
 *   when a handshake is refused with a `client_secret_*` error (a browser only sees close code
 *   1006 for a refused upgrade, so the reason is read over HTTP with the same secret);
 * - the socket: `new WebSocket(".../v1/responses?timing=1", [PROTOCOL, "openai-insecure-api-key.<secret>"])`
 *   (OpenAI's Realtime browser form): Deltagate echoes `PROTOCOL`, never the secret; the secret
 *   is bound to the session, so every socket reaches the same Durable Object;
 * - resumption: the response in progress and the last `sequence_number` received; after a drop
 *   it reconnects (backoff 250 ms doubling to 5 s) and sends `deltagate.response.resume` with
 *   them before anything queued while it was down.
 * Invariants: the secret is never put in a URL or shown; every event reaches `onEvent` once, in
 * arrival order, and an event that does not follow the previous one of its response (a gap or a
 * repeat) is recorded in `stats.sequenceErrors`, not hidden.
 */

/** The non-secret protocol the page offers (and Deltagate echoes) beside the credential. */
export const PROTOCOL = "deltagate-demo";
/** The prefix of the credential entry of the offer (OpenAI's). */
const CREDENTIAL_PREFIX = "openai-insecure-api-key.";
/** A secret this close to its expiry (ms) is renewed before a connect. */
const RENEW_BEFORE_MS = 15_000;
const TERMINAL = new Set(["response.completed", "response.failed", "response.incomplete"]);

/**
 * @typedef {{ type: string, sequence_number?: number, response?: { id: string }, [field: string]: unknown }} ServerEvent
 * @typedef {{ value: string, expires_at: number, session: { id: string } }} MintedSecret
 * @typedef {{ socketsOpened: number, drops: number, resumes: number, secretsMinted: number,
 *   protocol: string, sequenceErrors: Array<{ responseId: string, expected: number, got: number }> }} ConnectionStats
 * @typedef {"connecting" | "open" | "reconnecting" | "error"} ConnectionState
 */

export class AgentConnection {
  /**
   * @param {{ origin: string, onEvent: (event: ServerEvent) => void,
   *   onState: (state: ConnectionState, detail: string) => void }} options
   */
  constructor(options) {
    this.origin = options.origin;
    this.onEvent = options.onEvent;
    this.onState = options.onState;
    /** @type {ConnectionStats} */
    this.stats = {
      socketsOpened: 0,
      drops: 0,
      resumes: 0,
      secretsMinted: 0,
      protocol: "",
      sequenceErrors: [],
    };
    /** @type {string | null} the session every secret is minted for */
    this.sessionId = null;
    /** @type {MintedSecret | null} */
    this.secret = null;
    /** @type {WebSocket | null} */
    this.ws = null;
    /** @type {{ id: string, last: number, done: boolean } | null} the response being streamed */
    this.current = null;
    /** @type {string[]} frames waiting for an open socket */
    this.queue = [];
    this.backoffMs = 250;
  }

  /** Mints the first secret and opens the socket. */
  async start() {
    await this.connect();
  }

  /** Sends a client event now, or right after the next (re)connect and resume. */
  send(/** @type {Record<string, unknown>} */ event) {
    const text = JSON.stringify(event);
    if (this.ws?.readyState === WebSocket.OPEN) this.ws.send(text);
    else this.queue.push(text);
  }

  /** Drops the socket as a network failure would (the page then reconnects and resumes). */
  drop() {
    this.ws?.close(4000, "dropped by the page");
  }

  /** Seconds until the current secret expires (NaN before the first). */
  secretSecondsLeft() {
    return this.secret ? this.secret.expires_at - Date.now() / 1000 : Number.NaN;
  }

  async mint() {
    const res = await fetch(new URL("/demo/client_secret", this.origin), {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(this.sessionId ? { session: { id: this.sessionId } } : {}),
    });
    if (!res.ok) {
      const message = await errorMessage(res);
      throw new Error(`The demo backend route refused to mint a client secret (${res.status}): ${message}`);
    }
    this.secret = /** @type {MintedSecret} */ (await res.json());
    this.sessionId = this.secret.session.id;
    this.stats.secretsMinted++;
  }

  async connect() {
    this.onState(this.stats.socketsOpened === 0 ? "connecting" : "reconnecting", "");
    try {
      if (!this.secret || this.secretSecondsLeft() * 1000 < RENEW_BEFORE_MS) await this.mint();
    } catch (error) {
      this.onState("error", error instanceof Error ? error.message : String(error));
      return this.retry();
    }
    const secret = /** @type {MintedSecret} */ (this.secret);
    const url = new URL("/v1/responses?timing=1", this.origin);
    url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
    const ws = new WebSocket(url, [PROTOCOL, CREDENTIAL_PREFIX + secret.value]);
    this.ws = ws;
    let opened = false;
    ws.onopen = () => {
      opened = true;
      this.backoffMs = 250;
      this.stats.socketsOpened++;
      this.stats.protocol = ws.protocol;
      this.onState("open", `session ${this.sessionId}`);
      if (this.current && !this.current.done) {
        this.stats.resumes++;
        ws.send(
          JSON.stringify({
            type: "deltagate.response.resume",
            response_id: this.current.id,
            starting_after: this.current.last,
          }),
        );
      }
      for (const text of this.queue.splice(0)) ws.send(text);
    };
    ws.onmessage = (message) => this.receive(/** @type {ServerEvent} */ (JSON.parse(String(message.data))));
    ws.onclose = async () => {
      if (this.ws !== ws) return;
      this.ws = null;
      if (opened) {
        this.stats.drops++;
        return this.retry();
      }
      // A refused upgrade reaches a page as 1006 only: ask over HTTP, with the same secret, why.
      const reason = await this.whyRefused(secret.value);
      if (reason.startsWith("client_secret_")) this.secret = null; // mint a new one for the session
      this.onState("error", `The socket was refused: ${reason}`);
      return this.retry();
    };
  }

  retry() {
    const delay = this.backoffMs;
    this.backoffMs = Math.min(this.backoffMs * 2, 5000);
    setTimeout(() => void this.connect(), delay);
  }

  /** The error code Deltagate gives this secret over HTTP (`client_secret_expired`, …), or a description. */
  async whyRefused(/** @type {string} */ value) {
    try {
      const res = await fetch(new URL("/v1/models", this.origin), {
        headers: { authorization: `Bearer ${value}` },
      });
      if (res.ok) return "the handshake failed, though the secret is accepted over HTTP";
      const body = /** @type {{ error?: { code?: string } }} */ (await res.json().catch(() => ({})));
      return body.error?.code ?? `HTTP ${res.status}`;
    } catch {
      return "network unreachable";
    }
  }

  /** Tracks the response in progress and its numbering, then hands the event on. */
  receive(/** @type {ServerEvent} */ event) {
    const seq = event.sequence_number;
    if (typeof seq === "number") {
      if (event.type === "response.created" && event.response) {
        this.current = { id: event.response.id, last: seq, done: false };
      } else if (this.current) {
        if (seq !== this.current.last + 1) {
          this.stats.sequenceErrors.push({
            responseId: this.current.id,
            expected: this.current.last + 1,
            got: seq,
          });
        }
        this.current.last = Math.max(this.current.last, seq);
      }
      if (this.current && TERMINAL.has(event.type)) this.current.done = true;
    }
    this.onEvent(event);
  }
}

/** The `error.message` of an OpenAI-style error response, else its text. */
async function errorMessage(/** @type {Response} */ res) {
  const text = await res.text();
  try {
    const body = /** @type {{ error?: { message?: string } }} */ (JSON.parse(text));
    return body.error?.message ?? text;
  } catch {
    return text;
  }
}
