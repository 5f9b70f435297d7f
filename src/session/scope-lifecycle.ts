/**
 * The lifecycle of a session's store:false scopes (scope.ts): when a scope's state is released,
 * purged or deleted. A socket's scope is released when the socket closes or errors, or when the
 * alarm or a wake finds it gone without a close event; its state then lives on for the socket's
 * grace window (its client's opt-in or `STORE_FALSE_GRACE_MS`, carried in the scope id:
 * `scopeGraceMs`, scope.ts; src/store/released-scopes.ts) or, with no window, is deleted at once. An HTTP request's scope is deleted by its request (http-transport.ts), or at the next
 * wake when the request did not survive a restart.
 * It is one of the session's lifecycle parts (lifecycle.ts): it settles scopes on wake, releases a
 * gone socket's scope, purges before every frame and on the alarm, finds vanished sockets on the
 * alarm, and asks for the alarm at the next window's end.
 * Invariants: store:false state lives as long as its socket or request plus, for a socket, the
 * window; the window is enforced before every frame, every export (transfer.ts) and by the alarm
 * (`purge`), so a late alarm never stretches it; every deletion is the store's one deletion.
 */
import type { ConversationStore } from "../store/conversation-store.ts";
import type { AlarmRun, GoneSocket, SessionPart } from "./lifecycle.ts";
import { scopeGraceMs, scopeKind } from "./scope.ts";

/** Collaborators of the lifecycle. */
export interface ScopeLifecycleDeps {
  store: ConversationStore;
  now(): number;
}

/** Releases, purges and deletes the store:false scopes of one session. */
export class ScopeLifecycle implements SessionPart {
  readonly name = "store:false scopes";
  private readonly deps: ScopeLifecycleDeps;

  constructor(deps: ScopeLifecycleDeps) {
    this.deps = deps;
  }

  /**
   * On wake: no HTTP request survives a restart, so no store:false state of one may either; a
   * socket that is gone (a deploy ends them all) starts its grace window now.
   * @param open the scope ids of the sockets still open.
   */
  onWake(open: ReadonlySet<string>): void {
    for (const scope of this.deps.store.connectionsWithScopedState()) {
      if (scopeKind(scope) === "http") this.deps.store.deleteConnectionScoped(scope);
      else if (!open.has(scope)) this.release(scope);
    }
  }

  /** Before every frame: a late alarm must not stretch a grace window. */
  onFrame(): void {
    this.purge();
  }

  /** A socket closed, failed or vanished: its scope is released. */
  onSocketGone(socket: GoneSocket): void {
    if (socket.connId) this.release(socket.connId);
  }

  /**
   * The alarm: sockets that vanished without a close event are announced as gone (so every part
   * hears of them, this one releasing their scopes), then ended windows are purged.
   */
  onAlarm(run: AlarmRun): void {
    const vanished = this.deps.store
      .connectionsWithScopedState()
      // HTTP scopes are deleted by their request; only sockets can vanish without notice.
      .filter((scope) => scopeKind(scope) === "socket" && !run.open.has(scope));
    for (const scope of vanished) run.gone(scope);
    this.purge();
  }

  /** When the first grace window of a released scope ends (ms), null when none is pending. */
  nextDeadline(): number | null {
    return this.deps.store.scopes.earliestEnd(scopeGraceMs);
  }

  /**
   * A socket scope is closed: its store:false state starts its grace window, or, with no window,
   * is deleted now.
   */
  release(connId: string): void {
    if (scopeGraceMs(connId) === 0) this.deps.store.deleteConnectionScoped(connId);
    else this.deps.store.scopes.release(connId, this.deps.now());
  }

  /** Deletes the store:false state whose grace window has ended. */
  purge(): void {
    this.deps.store.scopes.purge(this.deps.now(), scopeGraceMs);
  }
}
