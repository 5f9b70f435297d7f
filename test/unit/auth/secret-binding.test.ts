/** A client secret's binding (src/auth/secret-binding.ts): what it allows a turn, and in what order it refuses. */
import { describe, expect, it } from "vitest";
import { bindingRefusal, ownedBy } from "../../../src/auth/secret-binding.ts";
import { newResponseId } from "../../../src/util/ids.ts";

const OWNER = "a".repeat(64);
const OTHER = "b".repeat(64);
const open = { models: null, maxRequestBytes: null };

describe("bindingRefusal", () => {
  it("allows a turn of its session, any model, any size when nothing is bound", () => {
    expect(bindingRefusal(open, { model: "m" }, 10_000_000, OWNER)).toBeNull();
    expect(
      bindingRefusal(open, { model: "m", previous_response_id: newResponseId(OWNER) }, 1, OWNER),
    ).toBeNull();
  });

  it("reports a parent of another Durable Object, or not Deltagate's, as not found", () => {
    for (const parent of [newResponseId(OTHER), "resp_unknown"]) {
      const error = bindingRefusal(open, { model: "m", previous_response_id: parent }, 1, OWNER);
      expect(error).toMatchObject({
        status: 400,
        code: "previous_response_not_found",
        param: "previous_response_id",
      });
      expect(error?.message).toBe(`Previous response with id '${parent}' not found.`);
    }
  });

  it("refuses a model outside `models` (403) and a turn over `max_request_bytes` (413), size first", () => {
    const bound = { models: ["m1"], maxRequestBytes: 100 };
    expect(bindingRefusal(bound, { model: "m2" }, 10, OWNER)).toMatchObject({
      status: 403,
      code: "client_secret_model_not_allowed",
    });
    expect(bindingRefusal(bound, { model: "m2" }, 101, OWNER)).toMatchObject({
      status: 413,
      code: "client_secret_request_too_large",
    });
    expect(bindingRefusal(bound, { model: "m1" }, 100, OWNER)).toBeNull();
  });
});

describe("ownedBy", () => {
  it("reads the owner from the id alone", () => {
    expect(ownedBy(newResponseId(OWNER), OWNER)).toBe(true);
    expect(ownedBy(newResponseId(OTHER), OWNER)).toBe(false);
    expect(ownedBy("resp_x", OWNER)).toBe(false);
  });
});
