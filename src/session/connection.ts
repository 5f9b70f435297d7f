/**
 * Per-socket state of a session Durable Object. Owns what survives hibernation (the
 * attachment: ≤ 16 KiB, structured-clone) and what lives only while the Durable Object is awake
 * (lanes, the abort controller of in-flight store:false turns).
 * Invariant: the attachment is written once at accept time and never grows.
 * Source: https://developers.cloudflare.com/durable-objects/best-practices/websockets/
 */
import type { EventSink } from "../engine/event-sink.ts";
import type { TimingOptIn } from "../pipeline/turn-timing.ts";
import { FrameBudget } from "./frame-budget.ts";
import type { SecretTurnBinding } from "./internal-headers.ts";
import { LaneScheduler } from "./lanes.ts";

/** Serialized with `ws.serializeAttachment`; survives hibernation. */
export interface ConnectionAttachment {
  /** Scopes store:false responses to this socket. */
  connId: string;
  tenant: string;
  sessionId: string;
  /** Accept time, ms since the epoch (drives the 60-minute limit). */
  openedAt: number;
  /** Per-stage timing events the client asked for at the upgrade (turn-timing.ts); absent: none. */
  timing?: TimingOptIn;
  /** The client secret's per-turn binding when the socket was opened with one (internal-headers.ts). */
  binding?: SecretTurnBinding;
  /** False when the client turned `keepalive` events off at the upgrade (client-options.ts). */
  keepalive?: false;
  /** The API key the socket was opened with (src/tenancy/: usage by key, revocation). */
  keyId?: string;
  /** The tenant's socket lease, released on close (src/tenancy/socket-admission.ts). */
  lease?: string;
  /**
   * The tenant had its own upstream key at the upgrade: a session woken from hibernation reads it
   * before its next turn (src/tenancy/tenant-upstream-key.ts). Never the key itself.
   */
  ownUpstreamKey?: true;
}

/** In-memory state of one socket while the Durable Object is awake. */
export class Connection {
  readonly ws: WebSocket;
  readonly attachment: ConnectionAttachment;
  readonly lanes = new LaneScheduler();
  /** Its frame budget (frame-budget.ts), full when the connection is made (accepted, or woken). */
  readonly budget = new FrameBudget(Date.now());
  /** Aborted when the socket closes: cancels its store:false upstream requests. */
  readonly closed = new AbortController();
  /** Event sinks of this socket (lanes, resumptions), detached from live responses on close. */
  readonly sinks = new Map<string, EventSink>();
  /** When this socket's last turn ended (`performance.now()`), for the client's think time. */
  lastDoneAt: number | null = null;
  /** Its `websocket_queue_full` error frame, rendered on first use (flood-screen.ts). */
  queueFullFrame: string | undefined;
  /** Its `websocket_rate_limit_exceeded` error frame, rendered on first use (flood-screen.ts). */
  budgetFrame: string | undefined;

  constructor(ws: WebSocket, attachment: ConnectionAttachment) {
    this.ws = ws;
    this.attachment = attachment;
  }
}

/** Reads a socket's attachment, or null when it has none (not one of ours). */
export function attachmentOf(ws: WebSocket): ConnectionAttachment | null {
  const value: unknown = ws.deserializeAttachment();
  if (typeof value !== "object" || value === null) return null;
  const a = value as Partial<ConnectionAttachment>;
  if (typeof a.connId !== "string" || typeof a.openedAt !== "number") return null;
  return a as ConnectionAttachment;
}

/** The attachments of the sockets among `sockets` that are still open. */
export function openAttachments(sockets: Iterable<WebSocket>): ConnectionAttachment[] {
  const open: ConnectionAttachment[] = [];
  for (const ws of sockets) {
    const attachment = attachmentOf(ws);
    if (attachment && ws.readyState === WebSocket.OPEN) open.push(attachment);
  }
  return open;
}

/** Finds or rebuilds (after hibernation) the `Connection` of each socket. */
export class ConnectionRegistry {
  private readonly byWs = new Map<WebSocket, Connection>();

  /** Registers a freshly accepted socket. */
  add(ws: WebSocket, attachment: ConnectionAttachment): Connection {
    ws.serializeAttachment(attachment);
    const conn = new Connection(ws, attachment);
    this.byWs.set(ws, conn);
    return conn;
  }

  /** The connection of `ws`, rebuilt from its attachment after a wake; null if unknown. */
  get(ws: WebSocket): Connection | null {
    const known = this.byWs.get(ws);
    if (known) return known;
    const attachment = attachmentOf(ws);
    if (!attachment) return null;
    const conn = new Connection(ws, attachment);
    this.byWs.set(ws, conn);
    return conn;
  }

  /** Forgets a closed socket and aborts its in-flight store:false turns. */
  remove(ws: WebSocket): Connection | null {
    const conn = this.get(ws);
    this.byWs.delete(ws);
    conn?.closed.abort();
    return conn;
  }
}
