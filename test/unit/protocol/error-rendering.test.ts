import { afterEach, describe, expect, it, vi } from "vitest";
import { asApiError, errorEvent, errorResponse } from "../../../src/protocol/error-rendering.ts";
import { invalidRequest } from "../../../src/protocol/errors.ts";
import { REDACTED, SecretRedactor } from "../../../src/secrets/redactor.ts";

const TENANT_KEY = "tenant-key-0123456789";
const redactor = SecretRedactor.fromEnv({ DELTAGATE_API_KEYS: `${TENANT_KEY}:acme` });

afterEach(() => vi.restoreAllMocks());

describe("error rendering", () => {
  it("redacts every field of a request-level error over HTTP and WebSocket", async () => {
    const error = invalidRequest(`Unknown event type '${TENANT_KEY}'.`, `input.${TENANT_KEY}`, "bad");
    const http = (await errorResponse(error, redactor).json()) as { error: Record<string, unknown> };
    const ws = errorEvent(error, redactor, "lane-1");
    expect(http.error).toEqual({
      type: "invalid_request_error",
      code: "bad",
      message: `Unknown event type '${REDACTED}'.`,
      param: `input.${REDACTED}`,
    });
    expect(ws).toEqual({ type: "error", status: 400, stream_id: "lane-1", error: http.error });
  });

  it("logs an unexpected error redacted and reports a 500 without its text", () => {
    const log = vi.spyOn(console, "error").mockImplementation(() => {});
    const error = asApiError(
      new TypeError(`boom near ${TENANT_KEY} and sk-proj-abcdefghijkl`),
      "where",
      redactor,
    );
    expect(error.status).toBe(500);
    expect(error.message).not.toContain("boom");
    const logged = log.mock.calls.flat().join(" ");
    expect(logged).toContain("boom near");
    expect(logged).not.toContain(TENANT_KEY);
    expect(logged).not.toContain("sk-proj-abcdefghijkl");
  });
});
