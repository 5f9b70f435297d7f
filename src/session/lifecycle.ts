/**
 * The one lifecycle of a session Durable Object's parts. Each part that reacts to the session
 * waking, a socket opening, a client frame, a socket going away or the alarm — or that has a next
 * deadline — implements `SessionPart`; the Durable Object (session-do.ts) calls `SessionLifecycle`,
 * which iterates the parts in the order session-parts.ts lists them, and never names a part.
 * The shape follows Cloudflare's `agents` library: components declare their lifecycle hooks, a
 * runner iterates them, and the Durable Object owns the one physical alarm
 * (https://github.com/cloudflare/agents, packages/agents/src/agent/lifecycle.ts).
 * Invariants:
 * - the alarm is one per Durable Object: parts only say when they next need it (`nextDeadline`),
 *   and the Durable Object arms it for the earliest (alarm-deadline.ts `AlarmClock`);
 * - a socket found gone by a part during the alarm (no close event: the client vanished) is
 *   announced to every part exactly as a closed one is (`AlarmRun.gone`), so no part has its own
 *   notion of "vanished";
 * - hooks run synchronously in list order, except `onAlarm`, which is awaited part by part (a
 *   failure stops the alarm and is thrown again, so the runtime retries it).
 */
import type { Connection, ConnectionAttachment } from "./connection.ts";

/** A socket that is gone: closed, failed, or found gone by the alarm (then only `connId` is known). */
export interface GoneSocket {
  /** The socket's store:false scope id (connection.ts), null when it carried no attachment. */
  connId: string | null;
  /** Its attachment (tenant, key id, lease), null when unknown. */
  attachment: ConnectionAttachment | null;
  /** Its connection (sinks, binding), null when it was not known to this instance. */
  conn: Connection | null;
}

/** What a part's alarm hook is handed. */
export interface AlarmRun {
  now: number;
  /** The scope ids of the sockets still open. */
  open: ReadonlySet<string>;
  /** Announces a socket found gone without a close event to every part (`onSocketGone`). */
  gone(connId: string): void;
}

/** A part of the session with a lifecycle; every hook is optional. */
export interface SessionPart {
  /** For failure logs and tests. */
  readonly name: string;
  /** The Durable Object (re)started: `open` holds the scope ids of the sockets that survived. */
  onWake?(open: ReadonlySet<string>): void;
  /** A client socket was accepted, with scope id `connId`. */
  onSocketOpened?(connId: string): void;
  /** A client frame arrived (before the transport handles it). */
  onFrame?(conn: Connection): void;
  /** A client socket closed, failed or vanished. */
  onSocketGone?(socket: GoneSocket): void;
  /** The alarm fired. */
  onAlarm?(run: AlarmRun): void | Promise<void>;
  /** When this part next needs the alarm (ms since the epoch), or null. */
  nextDeadline?(): number | null;
}

/** Iterates the session's parts for each lifecycle event. */
export class SessionLifecycle {
  private readonly parts: readonly SessionPart[];

  constructor(parts: readonly SessionPart[]) {
    this.parts = parts;
  }

  /** The names of the parts, in order (tests, architecture notes). */
  names(): string[] {
    return this.parts.map((part) => part.name);
  }

  wake(open: ReadonlySet<string>): void {
    for (const part of this.parts) part.onWake?.(open);
  }

  socketOpened(connId: string): void {
    for (const part of this.parts) part.onSocketOpened?.(connId);
  }

  frame(conn: Connection): void {
    for (const part of this.parts) part.onFrame?.(conn);
  }

  socketGone(socket: GoneSocket): void {
    for (const part of this.parts) part.onSocketGone?.(socket);
  }

  /** Runs every part's alarm hook in order; a vanished socket is announced as gone to all parts. */
  async alarm(now: number, open: ReadonlySet<string>): Promise<void> {
    const run: AlarmRun = {
      now,
      open,
      gone: (connId) => this.socketGone({ connId, attachment: null, conn: null }),
    };
    for (const part of this.parts) await part.onAlarm?.(run);
  }

  /** The earliest deadline of any part, or null when none needs the alarm. */
  nextDeadline(): number | null {
    let earliest: number | null = null;
    for (const part of this.parts) {
      const deadline = part.nextDeadline?.() ?? null;
      if (deadline !== null && (earliest === null || deadline < earliest)) earliest = deadline;
    }
    return earliest;
  }
}
