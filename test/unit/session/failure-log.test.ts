/**
 * Failure log lines and the guard of runtime-called handlers (src/session/failure-log.ts): a
 * failure is caught, logged once with the session and response ids, redacted as a whole, and
 * handed to `onFailure` (which may rethrow it, as the alarm does).
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { SecretRedactor } from "../../../src/secrets/redactor.ts";
import { failureLabel, guarded } from "../../../src/session/failure-log.ts";

const SECRET = "sk-test-0123456789abcdef";
const redactor = new SecretRedactor([SECRET]);
const ids = { session: "abc123", sessionName: `name-${SECRET}`, responseIds: ["resp_1", null, "resp_2"] };

afterEach(() => {
  vi.restoreAllMocks();
});

describe("failureLabel", () => {
  it("names the session, its name and the response ids, redacted", () => {
    const label = failureLabel("turn failed", ids, redactor);
    expect(label).toContain("session=abc123");
    expect(label).toContain("response_ids=[resp_1,resp_2]");
    expect(label).not.toContain(SECRET);
  });
});

describe("guarded", () => {
  it("catches and logs a failure with its ids, then hands it to onFailure", async () => {
    const log = vi.spyOn(console, "error").mockImplementation(() => {});
    const seen: unknown[] = [];
    await guarded(
      "webSocketMessage failed",
      () => ids,
      redactor,
      () => {
        throw new Error(`boom ${SECRET}`);
      },
      (cause) => seen.push(cause),
    );
    expect(seen).toHaveLength(1);
    expect(log).toHaveBeenCalledTimes(1);
    const line = log.mock.calls[0]?.join(" ") ?? "";
    expect(line).toContain("webSocketMessage failed");
    expect(line).toContain("resp_1");
    expect(line).toContain("boom");
    expect(line).not.toContain(SECRET);
  });

  it("rethrows when onFailure does (the alarm), and logs nothing when the handler succeeds", async () => {
    const log = vi.spyOn(console, "error").mockImplementation(() => {});
    const failing = guarded(
      "alarm failed",
      () => ids,
      redactor,
      async () => {
        throw new Error("purge failed");
      },
      (cause) => {
        throw cause;
      },
    );
    await expect(failing).rejects.toThrow("purge failed");
    await guarded(
      "alarm failed",
      () => ids,
      redactor,
      async () => {},
    );
    expect(log).toHaveBeenCalledTimes(1);
  });
});
