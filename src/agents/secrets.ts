// Installation-wide HMAC secrets (pagination cursors, webhook URLs, shared file links, dashboard
// links, the console's sign-in cookies). Each is created once by whichever process asks first
// (settings.setIfAbsent: first writer wins) so every gateway process of the installation derives the
// same cursors and URLs, and they survive restarts. Nothing per agent is stored. Cached per store
// instance (not per module), so isolated apps in one process never share one.
import { randomBytes } from 'node:crypto';
import type { Store } from '../store/port';

export type SecretName = 'webhook-secret' | 'cursor-secret' | 'file-share-secret' | 'dashboard-link-secret' | 'console-cookie-secret';

const cache = new WeakMap<Store, Map<SecretName, Promise<Buffer>>>();

export function installationSecret(store: Store, name: SecretName): Promise<Buffer> {
  let secrets = cache.get(store);
  if (!secrets) {
    secrets = new Map();
    cache.set(store, secrets);
  }
  let secret = secrets.get(name);
  if (!secret) {
    const pending = store.settings.setIfAbsent(name, randomBytes(32).toString('base64url')).then((value) => Buffer.from(value, 'base64url'));
    // A failed read (store down) must not be cached: the next request tries again.
    pending.catch(() => secrets.delete(name));
    secrets.set(name, pending);
    secret = pending;
  }
  return secret;
}
