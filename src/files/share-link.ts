// Signed, expiring download links of stored files (svc_file_share_with_user):
//   <base>/v1/files/<file_id>/shared?expires=<unix seconds>&signature=<mac>
// mac = HMAC-SHA256(key, "file-share" NUL file_id NUL expires), base64url. Whoever holds the link may
// download the file until it expires, with no API key: the link is the credential, so it is handed to
// the user only (the svc_call item's output) and never logged. The key is files.shareSecret, else one
// generated once and kept in the store's settings (every process signs and checks alike). A link
// whose signature does not verify (a changed file id, expiry or signature) is a 404 like an unknown
// file; a genuine link past its expiry is a 403 saying so.
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import { installationSecret } from '../agents/secrets';
import type { FilesConfig, ServerConfig } from '../config/types';
import type { Store } from '../store/port';

/** The key share links are signed with. */
export function shareKey(store: Store, files: FilesConfig): Promise<Buffer> {
  return files.shareSecret !== undefined ? Promise.resolve(Buffer.from(files.shareSecret, 'utf8')) : installationSecret(store, 'file-share-secret');
}

function mac(key: Buffer, fileId: string, expires: number): Buffer {
  return createHmac('sha256', key).update(`file-share\0${fileId}\0${expires}`).digest();
}

export interface ShareLink {
  url: string;
  /** Unix seconds after which the link no longer works. */
  expires: number;
}

/** The link to `fileId` under `base` (no trailing slash), working until `expires` (unix seconds). */
export function shareLink(key: Buffer, base: string, fileId: string, expires: number): ShareLink {
  const query = new URLSearchParams({ expires: String(expires), signature: mac(key, fileId, expires).toString('base64url') });
  return { url: `${base}/v1/files/${encodeURIComponent(fileId)}/shared?${query.toString()}`, expires };
}

export type ShareCheck = 'valid' | 'expired' | 'invalid';

/** Whether a link's parts were signed with `key`, and if so whether it still works at `now`. */
export function checkShareLink(key: Buffer, fileId: string, expires: unknown, signature: unknown, now: Date): ShareCheck {
  if (typeof expires !== 'string' || !/^\d{1,12}$/.test(expires) || typeof signature !== 'string') return 'invalid';
  const at = Number(expires);
  const expected = mac(key, fileId, at);
  const given = Buffer.from(signature, 'base64url');
  // Constant-time comparison of equal-length buffers (a length mismatch reveals nothing secret).
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return 'invalid';
  return now.getTime() >= at * 1000 ? 'expired' : 'valid';
}

/**
 * The gateway's address as the caller of `req` reached it: X-Forwarded-Proto/-Host when the operator
 * trusts a proxy (server.trustProxy), else the connection's scheme and the Host header. Null without
 * a Host header.
 */
export function requestBaseUrl(req: IncomingMessage, trustProxy: boolean): string | null {
  const first = (value: string | string[] | undefined): string | undefined => (Array.isArray(value) ? value[0] : value)?.split(',')[0]?.trim() || undefined;
  const forwardedProto = trustProxy ? first(req.headers['x-forwarded-proto']) : undefined;
  const proto = forwardedProto === 'https' || forwardedProto === 'http' ? forwardedProto : (req.socket as TLSSocket).encrypted ? 'https' : 'http';
  const host = (trustProxy ? first(req.headers['x-forwarded-host']) : undefined) ?? first(req.headers.host);
  // A Host value is a host and an optional port; anything else is not put into a link.
  if (host === undefined || !/^[A-Za-z0-9.-]+(:\d{1,5})?$|^\[[0-9A-Fa-f:.]+\](:\d{1,5})?$/.test(host)) return null;
  return `${proto}://${host}`;
}

/**
 * The base of links the gateway hands out: server.publicUrl when configured, else the address the
 * request came in on (when there was one), else this server's own host and port.
 */
export function publicBaseUrl(server: ServerConfig, fromRequest?: string | null): string {
  if (server.publicUrl !== undefined) return server.publicUrl.replace(/\/+$/, '');
  if (fromRequest) return fromRequest.replace(/\/+$/, '');
  const host =
    server.host === '0.0.0.0' || server.host === ''
      ? '127.0.0.1'
      : server.host === '::'
        ? '[::1]'
        : server.host.includes(':')
          ? `[${server.host}]`
          : server.host;
  return `http://${host}:${server.port}`;
}
