/**
 * Log of WebSocket-mode connections (`GET /_sim/ws-connections`): when each socket opened and
 * closed, with which code, who closed it, and how many creates/responses it carried. Lets tests
 * see that a client closed its upstream socket (e.g. Deltagate's idle close with 1000) and that a
 * dropped socket was replaced.
 * `closing` turns true as soon as a close frame went either way (the socket's `readyState` is
 * CLOSING); `closedAt` only once the TCP connection closed too, which waits for the peer's FIN —
 * a runtime may send it late, and `ws` destroys the socket itself only after 30 s
 * (https://github.com/websockets/ws/blob/master/doc/ws.md#websocketclosecode-reason).
 */

/** One connection's history. Fields are updated in place. */
export interface WsConnectionRecord {
  /** 1-based, in order of opening; recorded requests carry it as `connectionId`. */
  id: number;
  /** ms since epoch. */
  openedAt: number;
  /** ms since epoch, or null while open. */
  closedAt: number | null;
  /** True once the close handshake began (a close frame sent or received), before `closedAt`. */
  closing: boolean;
  /** Close code as seen by the simulator (1006 when the socket was terminated), or null while open. */
  closeCode: number | null;
  closeReason: string | null;
  /** "client" when the peer closed first, "server" when the simulator dropped or closed it. */
  closedBy: "client" | "server" | null;
  /** `response.create` frames received. */
  creates: number;
  /** Responses answered to completion. */
  responses: number;
}

/** In-memory connection log. */
export class WsConnectionLog {
  readonly #records: WsConnectionRecord[] = [];
  readonly #sockets = new Map<number, { readonly readyState: number }>();
  #seq = 0;

  /** Records a new connection on `socket` and returns its live record. */
  open(socket: { readonly readyState: number }): WsConnectionRecord {
    const record: WsConnectionRecord = {
      id: ++this.#seq,
      openedAt: Date.now(),
      closing: false,
      closedAt: null,
      closeCode: null,
      closeReason: null,
      closedBy: null,
      creates: 0,
      responses: 0,
    };
    this.#records.push(record);
    this.#sockets.set(record.id, socket);
    return record;
  }

  /** All connections, oldest first (filtered by ids when given), `closing` read now. */
  list(ids?: ReadonlySet<number>): WsConnectionRecord[] {
    const records = ids ? this.#records.filter((r) => ids.has(r.id)) : [...this.#records];
    for (const record of records) {
      const socket = this.#sockets.get(record.id);
      // 2 = CLOSING, 3 = CLOSED (the WebSocket readyState constants).
      if (socket && socket.readyState >= 2) record.closing = true;
      if (record.closedAt !== null) this.#sockets.delete(record.id);
    }
    return records;
  }
}
