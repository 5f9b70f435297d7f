/**
 * The one visibility rule (src/session/visibility.ts), for every purpose: store:true within
 * retention for everyone, past it for no one (purged or not); store:false never read over HTTP,
 * resumed only by its socket, continued and exported by its scope or — within a grace window —
 * any socket of the tenant, never by an HTTP request.
 */
import { describe, expect, it } from "vitest";
import { newScopeId } from "../../../src/session/scope.ts";
import { maySee, type Purpose, type Visible } from "../../../src/session/visibility.ts";

const DAY = 86_400_000;
const settings = { retentionMs: 30 * DAY, storeFalseGraceMs: 300_000 };
const noWindow = { ...settings, storeFalseGraceMs: 0 };
const now = 100 * DAY;
const PURPOSES: Purpose[] = ["continue", "resume", "read", "export"];
const owner = newScopeId("socket");
const otherSocket = newScopeId("socket");
const request = newScopeId("http");

const stored = (createdAt: number): Visible => ({ store: true, connId: null, createdAt });
const scoped = (connId: string): Visible => ({ store: false, connId, createdAt: now });

describe("maySee: store:true", () => {
  it("is visible for every purpose, to every caller, within retention", () => {
    for (const purpose of PURPOSES) {
      for (const caller of [null, owner, request]) {
        expect(maySee(stored(now - 30 * DAY), caller, purpose, now, settings)).toBe(true);
      }
    }
  });

  it("is visible for no purpose past retention, whether or not the alarm purged it", () => {
    for (const purpose of PURPOSES) {
      expect(maySee(stored(now - 30 * DAY - 1), owner, purpose, now, settings)).toBe(false);
    }
  });
});

describe("maySee: store:false", () => {
  it("is never read over HTTP, not even by its own request", () => {
    expect(maySee(scoped(request), null, "read", now, settings)).toBe(false);
    expect(maySee(scoped(request), request, "read", now, settings)).toBe(false);
    expect(maySee(scoped(owner), owner, "read", now, settings)).toBe(false);
  });

  it("is resumed only by its own socket", () => {
    expect(maySee(scoped(owner), owner, "resume", now, settings)).toBe(true);
    expect(maySee(scoped(owner), otherSocket, "resume", now, settings)).toBe(false);
  });

  it("is continued and exported by its scope, or another socket only within a window", () => {
    for (const purpose of ["continue", "export"] as const) {
      expect(maySee(scoped(owner), owner, purpose, now, noWindow)).toBe(true);
      expect(maySee(scoped(owner), otherSocket, purpose, now, settings)).toBe(true);
      expect(maySee(scoped(owner), otherSocket, purpose, now, noWindow)).toBe(false);
      expect(maySee(scoped(owner), request, purpose, now, settings)).toBe(false);
      expect(maySee(scoped(owner), null, purpose, now, settings)).toBe(false);
    }
  });

  it("does not age by retention (its scope and window decide)", () => {
    const old = { store: false, connId: owner, createdAt: now - 60 * DAY };
    expect(maySee(old, owner, "continue", now, settings)).toBe(true);
  });
});
