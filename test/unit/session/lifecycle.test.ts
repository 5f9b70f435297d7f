/**
 * The session's one lifecycle (src/session/lifecycle.ts): every hook reaches every part that
 * declares it, in list order; the alarm's deadline is the earliest part's; a socket a part finds
 * gone during the alarm is announced to every part as a closed one is. The socket-lifetime part
 * (src/session/socket-lifetime.ts) asks for the alarm at the oldest socket's end.
 */
import { describe, expect, it } from "vitest";
import type { GoneSocket, SessionPart } from "../../../src/session/lifecycle.ts";
import { SessionLifecycle } from "../../../src/session/lifecycle.ts";

/** A part that records every hook it hears, into `log`. */
function recorder(name: string, log: string[], deadline: number | null = null): SessionPart {
  return {
    name,
    onWake: (open) => void log.push(`${name}:wake:${[...open].join(",")}`),
    onSocketOpened: (connId) => void log.push(`${name}:opened:${connId}`),
    onFrame: () => void log.push(`${name}:frame`),
    onSocketGone: (socket: GoneSocket) => void log.push(`${name}:gone:${socket.connId}`),
    onAlarm: async () => {
      await Promise.resolve();
      log.push(`${name}:alarm`);
    },
    nextDeadline: () => deadline,
  };
}

describe("SessionLifecycle", () => {
  it("calls each hook on every part that declares it, in list order", async () => {
    const log: string[] = [];
    const lifecycle = new SessionLifecycle([recorder("a", log), { name: "quiet" }, recorder("b", log)]);
    lifecycle.wake(new Set(["s1"]));
    lifecycle.socketOpened("s2");
    lifecycle.frame({} as never);
    lifecycle.socketGone({ connId: "s2", attachment: null, conn: null });
    await lifecycle.alarm(0, new Set());
    expect(log).toEqual([
      "a:wake:s1",
      "b:wake:s1",
      "a:opened:s2",
      "b:opened:s2",
      "a:frame",
      "b:frame",
      "a:gone:s2",
      "b:gone:s2",
      "a:alarm",
      "b:alarm", // awaited in order: b's alarm runs after a's finished
    ]);
    expect(lifecycle.names()).toEqual(["a", "quiet", "b"]);
  });

  it("announces a socket found gone during the alarm to every part, before the later parts' alarms", async () => {
    const log: string[] = [];
    const finder: SessionPart = {
      name: "finder",
      onAlarm: (run) => {
        for (const connId of ["x", "y"]) if (!run.open.has(connId)) run.gone(connId);
      },
    };
    const lifecycle = new SessionLifecycle([recorder("a", log), finder, recorder("b", log)]);
    await lifecycle.alarm(0, new Set(["x"]));
    expect(log).toEqual(["a:alarm", "a:gone:y", "b:gone:y", "b:alarm"]);
  });

  it("is due at the earliest deadline of any part, and never when no part has one", () => {
    const log: string[] = [];
    expect(new SessionLifecycle([recorder("a", log), { name: "none" }]).nextDeadline()).toBeNull();
    const lifecycle = new SessionLifecycle([
      recorder("late", log, 9_000),
      recorder("none", log),
      recorder("early", log, 4_000),
    ]);
    expect(lifecycle.nextDeadline()).toBe(4_000);
  });

  it("stops at a failing alarm hook and throws it again (the runtime retries the alarm)", async () => {
    const log: string[] = [];
    const failing: SessionPart = {
      name: "failing",
      onAlarm: () => {
        throw new Error("boom");
      },
    };
    const lifecycle = new SessionLifecycle([failing, recorder("b", log)]);
    await expect(lifecycle.alarm(0, new Set())).rejects.toThrow("boom");
    expect(log).toEqual([]);
  });
});
