/**
 * Log of WebSocket-mode connections (`GET /_sim/ws-connections`): when each socket opened and
 * closed, with which code, who closed it, and how many creates/responses it carried. Lets tests
 * see that a client closed its upstream socket (e.g. Deltagate's idle close with 1000) and that a
 * dropped socket was replaced.
 */

/** One connection's history. Fields are updated in place. */
export interface WsConnectionRecord {
  /** 1-based, in order of opening; recorded requests carry it as `connectionId`. */
  id: number;
  /** ms since epoch. */
  openedAt: number;
  /** ms since epoch, or null while open. */
  closedAt: number | null;
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
  #seq = 0;

  /** Records a new connection and returns its live record. */
  open(): WsConnectionRecord {
    const record: WsConnectionRecord = {
      id: ++this.#seq,
      openedAt: Date.now(),
      closedAt: null,
      closeCode: null,
      closeReason: null,
      closedBy: null,
      creates: 0,
      responses: 0,
    };
    this.#records.push(record);
    return record;
  }

  /** All connections, oldest first (filtered by ids when given). */
  list(ids?: ReadonlySet<number>): WsConnectionRecord[] {
    return ids ? this.#records.filter((r) => ids.has(r.id)) : [...this.#records];
  }
}
