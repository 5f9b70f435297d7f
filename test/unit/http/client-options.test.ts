/**
 * The per-connection opt-ins (src/http/client-options.ts): the store:false grace window a
 * socket asks for (header or query parameter; the operator's default without one; lowered to the
 * cap) and the keepalive opt-out; a malformed value is a 400 naming the header.
 */
import { describe, expect, it } from "vitest";
import { clientOptions, keepaliveWanted } from "../../../src/http/client-options.ts";
import { ApiError } from "../../../src/protocol/errors.ts";

const URL_PLAIN = "https://gate.example/v1/responses";
const bounds = { defaultMs: 0, maxMs: 300_000 };

function options(headers: Record<string, string>, url = URL_PLAIN, b = bounds) {
  return clientOptions(new Headers(headers), b, url);
}

function errorOf(run: () => unknown): ApiError {
  try {
    run();
  } catch (error) {
    if (error instanceof ApiError) return error;
  }
  throw new Error("expected an ApiError");
}

describe("store:false grace window", () => {
  it("is the operator's default unless the socket asks", () => {
    expect(options({}).storeFalseGraceMs).toBe(0);
    expect(options({}, URL_PLAIN, { defaultMs: 60_000, maxMs: 300_000 }).storeFalseGraceMs).toBe(60_000);
  });

  it("takes the header, else the query parameter, lowered to the cap", () => {
    expect(options({ "x-deltagate-store-false-grace": "120000" }).storeFalseGraceMs).toBe(120_000);
    expect(options({}, `${URL_PLAIN}?store_false_grace_ms=5000`).storeFalseGraceMs).toBe(5_000);
    expect(
      options({ "x-deltagate-store-false-grace": "7000" }, `${URL_PLAIN}?store_false_grace_ms=5000`)
        .storeFalseGraceMs,
    ).toBe(7_000);
    expect(options({ "x-deltagate-store-false-grace": "9999999999" }).storeFalseGraceMs).toBe(300_000);
    // A client may ask for less than the operator's default, down to none.
    const generous = { defaultMs: 60_000, maxMs: 0 };
    expect(options({ "x-deltagate-store-false-grace": "0" }, URL_PLAIN, generous).storeFalseGraceMs).toBe(0);
    expect(options({ "x-deltagate-store-false-grace": "90000" }, URL_PLAIN, generous).storeFalseGraceMs).toBe(
      60_000,
    );
    // With no cap, nothing can be asked for.
    expect(
      options({ "x-deltagate-store-false-grace": "5000" }, URL_PLAIN, { defaultMs: 0, maxMs: 0 })
        .storeFalseGraceMs,
    ).toBe(0);
  });

  it("refuses a malformed value with 400 invalid_value naming the header", () => {
    for (const bad of ["", "soon", "-5", "1.5", "1e3", "12345678901"]) {
      const error = errorOf(() => options({ "x-deltagate-store-false-grace": bad }));
      expect(error.status).toBe(400);
      expect(error).toMatchObject({ code: "invalid_value", param: "x-deltagate-store-false-grace" });
    }
  });
});

describe("keepalive opt-out", () => {
  it("is on unless the client turns it off, by header or (upgrades) query parameter", () => {
    expect(keepaliveWanted(new Headers())).toBe(true);
    for (const off of ["0", "false", "OFF", " no "]) {
      expect(keepaliveWanted(new Headers({ "x-deltagate-keepalive": off }))).toBe(false);
    }
    expect(keepaliveWanted(new Headers({ "x-deltagate-keepalive": "1" }))).toBe(true);
    expect(keepaliveWanted(new Headers(), `${URL_PLAIN}?keepalive=0`)).toBe(false);
    expect(options({}, `${URL_PLAIN}?keepalive=off`).keepalive).toBe(false);
    // The query parameter counts on upgrades only.
    expect(keepaliveWanted(new Headers())).toBe(true);
  });

  it("refuses anything else with 400 invalid_value naming the header", () => {
    const error = errorOf(() => keepaliveWanted(new Headers({ "x-deltagate-keepalive": "later" })));
    expect(error.status).toBe(400);
    expect(error).toMatchObject({ code: "invalid_value", param: "x-deltagate-keepalive" });
  });
});
