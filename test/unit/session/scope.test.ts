/**
 * src/session/scope.ts: store:false scope ids name their kind (socket or HTTP request) and are
 * unguessable.
 */
import { describe, expect, it } from "vitest";
import { newScopeId, scopeKind } from "../../../src/session/scope.ts";

describe("scope ids", () => {
  it("makes socket and HTTP scope ids that decode to their kind", () => {
    const socket = newScopeId("socket");
    const http = newScopeId("http");
    expect(socket).toMatch(/^conn_[A-Za-z0-9_-]{16}$/);
    expect(http).toMatch(/^http_[A-Za-z0-9_-]{16}$/);
    expect(scopeKind(socket)).toBe("socket");
    expect(scopeKind(http)).toBe("http");
    expect(newScopeId("socket")).not.toBe(socket);
  });

  it("decodes anything else to no kind", () => {
    for (const id of ["", "resp_abc", "conn", "HTTP_x", "constructor"]) expect(scopeKind(id)).toBeNull();
  });
});
