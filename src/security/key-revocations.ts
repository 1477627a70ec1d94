// In-process notice of a key revoked through the API, so this process's auth cache drops it at once
// (other processes learn it from their revocation poll). Listeners are kept per key repository: two
// gateways in one process (tests) never hear each other's revocations.
import type { KeyRepository } from '../store/port';

const listeners = new WeakMap<KeyRepository, Set<(keyId: string) => void>>();

/** Calls `listener` with the id of every key revoked through `keys` from now on; returns the unsubscribe. */
export function onKeyRevoked(keys: KeyRepository, listener: (keyId: string) => void): () => void {
  let set = listeners.get(keys);
  if (!set) listeners.set(keys, (set = new Set()));
  set.add(listener);
  return () => set.delete(listener);
}

export function announceKeyRevoked(keys: KeyRepository, keyId: string): void {
  for (const listener of listeners.get(keys) ?? []) listener(keyId);
}
