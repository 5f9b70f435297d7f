/**
 * Who may continue a store:false response (src/session/scope.ts): its own scope always; another
 * WebSocket only with a grace window; an HTTP request never (not even with a window), and with no
 * window (STORE_FALSE_GRACE_MS=0) only the creating socket, as OpenAI.
 */
import { describe, expect, it } from "vitest";
import {
  mayContinue,
  newScopeId,
  scopeGraceMs,
  scopeKind,
  sharedWithSockets,
} from "../../../src/session/scope.ts";

const owner = newScopeId("socket");
const otherSocket = newScopeId("socket");
const request = newScopeId("http");

describe("mayContinue", () => {
  it("lets the owner continue, with or without a window", () => {
    expect(mayContinue(owner, owner, 0)).toBe(true);
    expect(mayContinue(owner, owner, 300_000)).toBe(true);
    expect(mayContinue(request, request, 0)).toBe(true);
  });

  it("lets another socket continue only within a window", () => {
    expect(mayContinue(owner, otherSocket, 300_000)).toBe(true);
    expect(mayContinue(owner, otherSocket, 0)).toBe(false);
  });

  it("never lets an HTTP request continue another scope's response, nor a socket an HTTP one's", () => {
    expect(mayContinue(owner, request, 300_000)).toBe(false);
    expect(mayContinue(request, otherSocket, 300_000)).toBe(false);
    expect(sharedWithSockets(request, 300_000)).toBe(false);
    expect(sharedWithSockets(owner, 0)).toBe(false);
  });
});

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

  it("carries a socket's grace window in its id, and no window for HTTP or without one", () => {
    const windowed = newScopeId("socket", 300_000);
    expect(windowed).toMatch(/^conn_[A-Za-z0-9_-]{16}\.g300000$/);
    expect(scopeKind(windowed)).toBe("socket");
    expect(scopeGraceMs(windowed)).toBe(300_000);
    expect(scopeGraceMs(newScopeId("socket"))).toBe(0);
    expect(scopeGraceMs(newScopeId("socket", 0))).toBe(0);
    expect(newScopeId("http", 300_000)).toMatch(/^http_[A-Za-z0-9_-]{16}$/);
    expect(scopeGraceMs("http_abc.g5000")).toBe(0);
    expect(scopeGraceMs("resp_abc.g5000")).toBe(0);
  });

  it("decodes anything else to no kind", () => {
    for (const id of ["", "resp_abc", "conn", "HTTP_x", "constructor"]) expect(scopeKind(id)).toBeNull();
  });
});
