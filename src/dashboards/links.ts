// Signed, expiring dashboard links: a dashboard's page is opened in a browser, which cannot send the
// organization's API key, so the link itself is the credential. `signature` = HMAC-SHA256 of the
// dashboard id and the expiry under the installation's `dashboard-link-secret` (created once in the
// store's settings, first writer wins): every gateway process verifies every link, across restarts,
// with nothing stored per link. Rotating the setting revokes every link at once; deleting a dashboard
// revokes its own. The signature travels in the query string, which neither the access log (route
// templates only) nor the audit trail (path parameters only) records.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { installationSecret } from '../agents/secrets';
import type { Store } from '../store/port';

export interface DashboardLink {
  /** The page (format=html); `&format=json` and `&format=png` give the spec and the image. */
  url: string;
  /** Unix seconds. */
  expiresAt: number;
}

export type LinkCheck = 'valid' | 'expired' | 'invalid';

function mac(secret: Buffer, dashboardId: string, expires: number): Buffer {
  return createHmac('sha256', secret).update(`dashboard\0${dashboardId}\0${expires}`).digest();
}

export function dashboardLinkSecret(store: Store): Promise<Buffer> {
  return installationSecret(store, 'dashboard-link-secret');
}

export function signDashboardLink(secret: Buffer, baseUrl: string, dashboardId: string, expiresAt: number): DashboardLink {
  const signature = mac(secret, dashboardId, expiresAt).toString('base64url');
  const url = `${baseUrl}/v1/dashboards/${encodeURIComponent(dashboardId)}/view?expires=${expiresAt}&signature=${signature}`;
  return { url, expiresAt };
}

/**
 * Whether a link's expiry and signature were issued for the dashboard: `invalid` for anything we did
 * not sign (checked first, so a forged link never learns whether it would have expired), `expired`
 * for a genuine link past its time.
 */
export function checkDashboardLink(secret: Buffer, dashboardId: string, expires: number, signature: string, nowSeconds: number): LinkCheck {
  const expected = mac(secret, dashboardId, expires);
  const received = Buffer.from(signature, 'base64url');
  // Constant-time comparison of equal-length buffers (a length mismatch reveals nothing secret).
  if (received.length !== expected.length || !timingSafeEqual(received, expected)) return 'invalid';
  return expires > nowSeconds ? 'valid' : 'expired';
}
