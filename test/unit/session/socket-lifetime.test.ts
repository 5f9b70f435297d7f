/**
 * The socket-lifetime part (src/session/socket-lifetime.ts): it asks for the alarm when the oldest
 * open socket reaches `MAX_CONNECTION_MINUTES`, ignores closed sockets, and on the alarm closes
 * exactly the sockets past their lifetime.
 */
import { describe, expect, it } from "vitest";
import { ConnectionRegistry } from "../../../src/session/connection.ts";
import { socketLifetime } from "../../../src/session/socket-lifetime.ts";

const HOUR = 3_600_000;

/** A hibernatable socket as the runtime hands it back: its attachment and ready state. */
function socket(connId: string, openedAt: number, readyState = WebSocket.OPEN): WebSocket {
  const attachment = { connId, tenant: "t", sessionId: "s", openedAt };
  return { readyState, deserializeAttachment: () => attachment, serializeAttachment: () => {} } as never;
}

describe("socketLifetime", () => {
  it("is due when the oldest open socket's lifetime ends; never without an open socket", () => {
    const sockets = [socket("a", 5_000), socket("b", 1_000), socket("c", 0, WebSocket.CLOSED)];
    const transport = { expired: () => false, closeForLifetime: () => {} };
    const part = socketLifetime({
      sockets: () => sockets,
      connections: new ConnectionRegistry(),
      transport,
      maxConnectionMs: HOUR,
    });
    expect(part.nextDeadline?.()).toBe(1_000 + HOUR);
    const none = socketLifetime({
      sockets: () => [],
      connections: new ConnectionRegistry(),
      transport,
      maxConnectionMs: HOUR,
    });
    expect(none.nextDeadline?.()).toBeNull();
  });

  it("closes on the alarm exactly the sockets the transport finds expired", async () => {
    const sockets = [socket("old", 0), socket("new", 2 * HOUR)];
    const closed: string[] = [];
    const part = socketLifetime({
      sockets: () => sockets,
      connections: new ConnectionRegistry(),
      transport: {
        expired: (conn) => conn.attachment.openedAt + HOUR <= 2 * HOUR,
        closeForLifetime: (conn) => void closed.push(conn.attachment.connId),
      },
      maxConnectionMs: HOUR,
    });
    await part.onAlarm?.({ now: 2 * HOUR, open: new Set(["old", "new"]), gone: () => {} });
    expect(closed).toEqual(["old"]);
  });
});
