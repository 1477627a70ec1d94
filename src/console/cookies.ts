// Cookies of the console's sign-in: read from the Cookie header (RFC 6265 section 4.2), written as
// Set-Cookie values (section 4.1), and, for the sign-in state, signed with an installation secret so
// nothing a browser hands back is trusted unless this installation wrote it.
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';

/** Cookie headers longer than this are not read (browsers send at most a few KB per host). */
const MAX_COOKIE_HEADER = 16_384;
/** A cookie name is an RFC 6265 token; our values are base64url text and dots. */
const VALUE = /^[A-Za-z0-9._~-]{1,4096}$/;

/** The value of cookie `name`, or undefined when absent, repeated or not one of ours in shape. */
export function readCookie(headers: IncomingHttpHeaders, name: string): string | undefined {
  const header = headers.cookie;
  if (header === undefined || header.length > MAX_COOKIE_HEADER) return undefined;
  let found: string | undefined;
  for (const pair of header.split(';')) {
    const at = pair.indexOf('=');
    if (at < 0 || pair.slice(0, at).trim() !== name) continue;
    // The same name twice (a path-scoped and a host-wide cookie, or one planted): trust neither.
    if (found !== undefined) return undefined;
    found = pair.slice(at + 1).trim();
  }
  return found !== undefined && VALUE.test(found) ? found : undefined;
}

export interface CookieOptions {
  path: string;
  /** Seconds; 0 deletes the cookie. */
  maxAge: number;
  /** Sent over HTTPS only (set when the gateway is reached over HTTPS). */
  secure: boolean;
}

/** A Set-Cookie value: HttpOnly (never readable by page scripts) and SameSite=Lax. */
export function setCookie(name: string, value: string, options: CookieOptions): string {
  return `${name}=${value}; Path=${options.path}; Max-Age=${options.maxAge}; HttpOnly; SameSite=Lax${options.secure ? '; Secure' : ''}`;
}

function mac(secret: Buffer, purpose: string, payload: string): Buffer {
  return createHmac('sha256', secret).update(`${purpose}\0${payload}`).digest();
}

/** `<base64url JSON>.<base64url HMAC>`; `purpose` keeps a value signed for one use from passing as another. */
export function signValue(secret: Buffer, purpose: string, value: unknown): string {
  const payload = Buffer.from(JSON.stringify(value)).toString('base64url');
  return `${payload}.${mac(secret, purpose, payload).toString('base64url')}`;
}

/** The value signValue signed for `purpose` with `secret`, else null (unsigned, altered or malformed). */
export function verifySigned(secret: Buffer, purpose: string, signed: string): unknown {
  const dot = signed.indexOf('.');
  if (dot < 0) return null;
  const payload = signed.slice(0, dot);
  const given = Buffer.from(signed.slice(dot + 1), 'base64url');
  const expected = mac(secret, purpose, payload);
  // Constant-time comparison of equal-length buffers (a length mismatch reveals nothing secret).
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
  try {
    return JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as unknown;
  } catch {
    return null;
  }
}
