/**
 * The connection lifetime of the session's client sockets (`MAX_CONNECTION_MINUTES`, OpenAI's
 * 60-minute limit: https://developers.openai.com/api/docs/guides/websocket-mode) as a lifecycle
 * part (lifecycle.ts): the alarm closes every socket past it with
 * `websocket_connection_limit_reached` (ws-transport.ts `closeForLifetime`), and the part asks for
 * the alarm at the oldest open socket's end. A frame on an expired socket is refused by the
 * transport itself (`expired`), so a late alarm never stretches a lifetime.
 */
import { type ConnectionRegistry, openAttachments } from "./connection.ts";
import type { SessionPart } from "./lifecycle.ts";
import type { WebSocketTransport } from "./ws-transport.ts";

/** Collaborators of the part. */
export interface SocketLifetimeDeps {
  /** The session's client sockets (`ctx.getWebSockets()`). */
  sockets(): WebSocket[];
  connections: ConnectionRegistry;
  transport: Pick<WebSocketTransport, "expired" | "closeForLifetime">;
  maxConnectionMs: number;
}

/** The socket-lifetime part of a session. */
export function socketLifetime(deps: SocketLifetimeDeps): SessionPart {
  return {
    name: "socket lifetime",
    onAlarm: () => {
      for (const ws of deps.sockets()) {
        const conn = deps.connections.get(ws);
        if (conn && deps.transport.expired(conn, true)) deps.transport.closeForLifetime(conn);
      }
    },
    nextDeadline: () => {
      let earliest: number | null = null;
      for (const { openedAt } of openAttachments(deps.sockets())) {
        const end = openedAt + deps.maxConnectionMs;
        if (earliest === null || end < earliest) earliest = end;
      }
      return earliest;
    },
  };
}
