// Sign-out reaches this process's auth cache at once: the logout handler announces the session it
// revoked, and the auth plugin (which holds the cache) listens. Other processes learn it from their
// revocation poll. Keyed by store instance (not module-wide), so isolated apps in one process never
// hear each other.
import type { Store } from '../store/port';

type Listener = (sessionId: string) => void;

const listeners = new WeakMap<Store, Set<Listener>>();

/** Calls `listener` with the id of every session revoked through `store` in this process; returns the unsubscribe. */
export function onSessionRevoked(store: Store, listener: Listener): () => void {
  let set = listeners.get(store);
  if (!set) {
    set = new Set();
    listeners.set(store, set);
  }
  set.add(listener);
  return () => set.delete(listener);
}

export function announceSessionRevoked(store: Store, sessionId: string): void {
  for (const listener of listeners.get(store) ?? []) listener(sessionId);
}
