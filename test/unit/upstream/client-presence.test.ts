/**
 * The keep-warm policy of a warm upstream socket (src/upstream/client-presence.ts): with a client
 * open it may stay idle for the longer of idle_ms and the keep-warm time since the session's last
 * activity; with none, idle_ms after the later of its last use and the last client's close.
 */
import { describe, expect, it } from "vitest";
import { ClientPresence, idleDeadline } from "../../../src/upstream/client-presence.ts";

const limits = { idleMs: 400, keepWarmMs: 300_000 };

describe("idleDeadline", () => {
  it("without presence: idle_ms after the last use, as before", () => {
    expect(idleDeadline(1_000, limits, null)).toBe(1_400);
  });

  it("with a client open: the keep-warm time after the latest activity", () => {
    expect(idleDeadline(1_000, limits, { clients: 1, lastActiveAt: 5_000 })).toBe(305_000);
    expect(idleDeadline(9_000, limits, { clients: 2, lastActiveAt: 5_000 })).toBe(309_000);
    expect(idleDeadline(0, { idleMs: 600_000, keepWarmMs: 1_000 }, { clients: 1, lastActiveAt: 0 })).toBe(
      600_000,
    );
  });

  it("with no client open: idle_ms after the later of the last use and the last close", () => {
    expect(idleDeadline(1_000, limits, { clients: 0, lastActiveAt: 7_000 })).toBe(7_400);
    expect(idleDeadline(8_000, limits, { clients: 0, lastActiveAt: 7_000 })).toBe(8_400);
  });
});

describe("ClientPresence", () => {
  it("counts each socket once, stamps activity, and tells listeners of opens and closes", () => {
    let clock = 100;
    const presence = new ClientPresence(["conn_a"], () => clock);
    let heard = 0;
    presence.subscribe(() => heard++);
    expect(presence.snapshot()).toEqual({ clients: 1, lastActiveAt: 100 });
    clock = 200;
    presence.opened("conn_b");
    presence.opened("conn_b");
    expect(presence.snapshot()).toEqual({ clients: 2, lastActiveAt: 200 });
    clock = 300;
    presence.active();
    expect(presence.snapshot().lastActiveAt).toBe(300);
    clock = 400;
    presence.closed("conn_a");
    presence.closed("conn_a");
    presence.closed("conn_b");
    expect(presence.snapshot()).toEqual({ clients: 0, lastActiveAt: 400 });
    expect(heard).toBe(3);
  });
});
