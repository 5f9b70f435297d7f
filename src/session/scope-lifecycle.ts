/**
 * The lifecycle of a session's store:false scopes (scope.ts): when a scope's state is released,
 * purged or deleted. A socket's scope is released when the socket closes or errors, or when the
 * alarm or a wake finds it gone without a close event; its state then lives on for the grace
 * window (`STORE_FALSE_GRACE_MS`, src/store/released-scopes.ts) or, with no window, is deleted at
 * once. An HTTP request's scope is deleted by its request (http-transport.ts), or at the next
 * wake when the request did not survive a restart.
 * Invariants: store:false state lives as long as its socket or request plus, for a socket, the
 * window; the window is enforced before every frame, every export and by the alarm (`purge`), so
 * a late alarm never stretches it; every deletion is the store's one deletion.
 */
import type { ConversationStore } from "../store/conversation-store.ts";
import { scopeKind } from "./scope.ts";

/** Collaborators of the lifecycle. */
export interface ScopeLifecycleDeps {
  store: ConversationStore;
  /** `STORE_FALSE_GRACE_MS`. */
  graceMs: number;
  now(): number;
}

/** Releases, purges and deletes the store:false scopes of one session. */
export class ScopeLifecycle {
  private readonly deps: ScopeLifecycleDeps;

  constructor(deps: ScopeLifecycleDeps) {
    this.deps = deps;
  }

  /**
   * On wake: no HTTP request survives a restart, so no store:false state of one may either; a
   * socket that is gone (a deploy ends them all) starts its grace window now.
   * @param open the scope ids of the sockets still open.
   */
  wake(open: ReadonlySet<string>): void {
    for (const scope of this.deps.store.connectionsWithScopedState()) {
      if (scopeKind(scope) === "http") this.deps.store.deleteConnectionScoped(scope);
      else if (!open.has(scope)) this.release(scope);
    }
  }

  /**
   * Releases the scopes of sockets that vanished without a close event (the alarm's sweep).
   * @param open the scope ids of the sockets still open.
   * @returns the released scope ids.
   */
  releaseVanished(open: ReadonlySet<string>): string[] {
    const vanished = this.deps.store
      .connectionsWithScopedState()
      // HTTP scopes are deleted by their request; only sockets can vanish without notice.
      .filter((scope) => scopeKind(scope) === "socket" && !open.has(scope));
    for (const scope of vanished) this.release(scope);
    return vanished;
  }

  /**
   * A socket scope is closed: its store:false state starts its grace window, or, with no window,
   * is deleted now.
   */
  release(connId: string): void {
    if (this.deps.graceMs === 0) this.deps.store.deleteConnectionScoped(connId);
    else this.deps.store.scopes.release(connId, this.deps.now());
  }

  /** Deletes the store:false state whose grace window has ended. */
  purge(): void {
    this.deps.store.scopes.purge(this.deps.now() - this.deps.graceMs);
  }
}
