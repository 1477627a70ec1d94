import { useEffect, useState, type FormEvent } from 'react';
import { api, storeToken } from '../api';

/** Sign-in with an API key (kept in session storage), or with SSO when the gateway has OIDC configured. */
export function SignIn({ onSignedIn }: { onSignedIn: () => Promise<boolean> }) {
  const [key, setKey] = useState('');
  const [error, setError] = useState<string | null>(null);
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
