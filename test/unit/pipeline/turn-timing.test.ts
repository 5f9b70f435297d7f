/**
 * The per-turn log line (src/pipeline/turn-timing.ts `logTurn`): written on the event loop's next
 * turn, so a socket's terminal event, sent just before, is written first (issue #27).
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { logTurn } from "../../../src/pipeline/turn-timing.ts";

afterEach(() => {
  vi.restoreAllMocks();
  vi.useRealTimers();
});

describe("logTurn", () => {
  it("writes its line after the current task, not during it", () => {
    vi.useFakeTimers();
    const log = vi.spyOn(console, "log").mockImplementation(() => {});
    logTurn({
      transport: "websocket",
      responseId: "resp_1",
      model: "m",
      store: false,
      error: null,
      stages: { total: 1 },
    });
    expect(log).not.toHaveBeenCalled();
    vi.runAllTimers();
    expect(log).toHaveBeenCalledTimes(1);
    expect(JSON.parse(String(log.mock.calls[0]?.[0]))).toMatchObject({
      type: "deltagate.turn",
      response_id: "resp_1",
      stages: { total: 1 },
    });
  });
});
