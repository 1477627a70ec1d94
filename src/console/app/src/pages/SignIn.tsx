import { useEffect, useState, type FormEvent } from 'react';
import { api, storeToken } from '../api';

/** Sign-in with an API key (kept in session storage), or with SSO when the gateway has OIDC configured. */
/** What the gateway's OIDC callback reports in `?signInError=` (its codes, see /console/auth/oidc/callback). */
const SIGN_IN_ERRORS: Record<string, string> = {
  unknown_user: 'Your identity provider signed you in, but no user of this gateway is mapped to that account.',
  invalid_state: 'The sign-in took too long or was started in another tab; please try again.',
  provider_error: 'The identity provider refused the sign-in.',
  provider_unavailable: 'The identity provider could not be reached; please try again later.',
  sign_in_failed: 'The sign-in could not be completed; please try again.',
  rate_limited: 'Too many sign-in attempts from your network; please wait a minute and try again.',
};

/**
 * The callback's error, read once and removed from the address bar so a reload does not show it again;
 * else `code`, what the page's own ticket exchange was told.
 */
function signInErrorOnReturn(code: string | null): string | null {
  const returned = new URLSearchParams(window.location.search).get('signInError');
  if (returned !== null) window.history.replaceState(null, '', window.location.pathname);
  const shown = returned ?? code;
  if (shown === null) return null;
  return SIGN_IN_ERRORS[shown] ?? SIGN_IN_ERRORS['sign_in_failed']!;
}

export function SignIn({ onSignedIn, signInError = null }: { onSignedIn: () => Promise<boolean>; signInError?: string | null }) {
  const [key, setKey] = useState('');
  const [error, setError] = useState<string | null>(() => signInErrorOnReturn(signInError));
  const [busy, setBusy] = useState(false);
  const [oidc, setOidc] = useState(false);

  useEffect(() => {
    api.GET('/console/auth/config').then(
      ({ data }) => setOidc(data?.oidc === true),
      () => setOidc(false),
    );
  }, []);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const value = key.trim();
    if (value === '') return;
    setBusy(true);
    setError(null);
    storeToken(value, 'key');
    const ok = await onSignedIn();
    setBusy(false);
    if (ok) setKey('');
    else setError('The gateway refused this key (unknown, revoked or expired).');
  };

  return (
    <main className="signin">
      <h1>agent-gateway console</h1>
      <form onSubmit={submit} className="card" aria-label="Key sign-in">
        <label htmlFor="api-key">API key</label>
        <input
          id="api-key"
          type="password"
          autoComplete="off"
          spellCheck={false}
          value={key}
          onChange={(e) => setKey(e.target.value)}
          placeholder="agw_…"
          maxLength={512}
          required
        />
        <button type="submit" disabled={busy}>
          Sign in
        </button>
        {error && (
          <p role="alert" className="error">
            {error}
          </p>
        )}
        <p className="muted small">The key stays in this tab's session storage and is sent only to this gateway.</p>
      </form>
      {oidc && (
        <div className="card">
          <a className="button" href="/console/auth/oidc/login">
            Sign in with SSO
          </a>
        </div>
      )}
    </main>
  );
}
