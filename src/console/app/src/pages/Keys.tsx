import { useState, type FormEvent } from 'react';
import { api, must, type Ok } from '../api';
import { useSession } from '../session';
import { ErrorBox, Loading, Page, isoFromLocal, useLoad, when } from '../ui';

type CreatedKey = Ok<'/v1/keys', 'post'>;
type Scope = 'mine' | 'organization';

function CreateKey({ onCreated }: { onCreated: (key: CreatedKey) => void }) {
  const { isAdmin } = useSession();
  const models = useLoad(() => must(api.GET('/v1/models')), []);
  const [name, setName] = useState('');
  const [expires, setExpires] = useState('');
  const [chosen, setChosen] = useState<string[]>([]);
  const [userId, setUserId] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const expiresAt = isoFromLocal(expires);
      const created = await must(
        api.POST('/v1/keys', {
          body: {
            name: name.trim(),
            ...(expiresAt ? { expiresAt } : {}),
            ...(chosen.length > 0 ? { models: chosen } : {}),
            ...(isAdmin && userId.trim() !== '' ? { userId: userId.trim() } : {}),
          },
        }),
      );
      setName('');
      setExpires('');
      setChosen([]);
      setUserId('');
      onCreated(created);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  return (
    <form onSubmit={submit} className="card form-grid" aria-label="Create a key">
      <h2>Create a key</h2>
      <label htmlFor="key-name">Name</label>
      <input id="key-name" value={name} onChange={(e) => setName(e.target.value)} maxLength={100} required />
      <label htmlFor="key-expires">Expires (optional)</label>
      <input id="key-expires" type="datetime-local" value={expires} onChange={(e) => setExpires(e.target.value)} />
      {isAdmin && (
        <>
          <label htmlFor="key-user">For user id (optional, default you)</label>
          <input id="key-user" value={userId} onChange={(e) => setUserId(e.target.value)} maxLength={200} />
        </>
      )}
      <fieldset>
        <legend>Models (none chosen: every model of the organization)</legend>
        {models.data?.data.map((model) => (
          <label key={model.id} className="check">
            <input
              type="checkbox"
              checked={chosen.includes(model.id)}
              onChange={(e) => setChosen((current) => (e.target.checked ? [...current, model.id] : current.filter((id) => id !== model.id)))}
            />
            {model.id}
          </label>
        ))}
      </fieldset>
      <div>
        <button type="submit" disabled={busy || name.trim() === ''}>
          Create key
        </button>
      </div>
      <ErrorBox error={error} />
    </form>
  );
}

function ShownOnce({ created, onDone }: { created: CreatedKey; onDone: () => void }) {
  const [copied, setCopied] = useState(false);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(created.key);
      setCopied(true);
    } catch {
      setCopied(false);
    }
  };
  return (
    <div role="region" aria-label="New key" className="card notice">
      <h2>Key “{created.name}” created</h2>
      <p>Copy it now: it is shown only this once and cannot be read again.</p>
      <div className="row">
        <input aria-label="New key value" readOnly value={created.key} onFocus={(e) => e.target.select()} className="mono wide" />
        <button type="button" onClick={() => void copy()}>
          {copied ? 'Copied' : 'Copy'}
        </button>
        <button type="button" onClick={onDone}>
          Done
        </button>
      </div>
    </div>
  );
}

export function KeysPage() {
  const { isAdmin } = useSession();
  const [scope, setScope] = useState<Scope>('mine');
  const [includeRevoked, setIncludeRevoked] = useState(false);
  const [created, setCreated] = useState<CreatedKey | null>(null);
  const [confirming, setConfirming] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const keys = useLoad(() => must(api.GET('/v1/keys', { params: { query: { scope, includeRevoked } } })), [scope, includeRevoked]);

  const revoke = async (keyId: string) => {
    setError(null);
    try {
      await must(api.DELETE('/v1/keys/{keyId}', { params: { path: { keyId } } }));
      setConfirming(null);
      keys.reload();
    } catch (err) {
      setError(err);
    }
  };

  return (
    <Page title="API keys">
      {created && <ShownOnce created={created} onDone={() => setCreated(null)} />}
      <CreateKey
        onCreated={(key) => {
          setCreated(key);
          keys.reload();
        }}
      />
      <div className="filters" role="group" aria-label="Which keys">
        {isAdmin && (
          <label>
            Show
            <select aria-label="Key scope" value={scope} onChange={(e) => setScope(e.target.value === 'organization' ? 'organization' : 'mine')}>
              <option value="mine">My keys</option>
              <option value="organization">The organization's keys</option>
            </select>
          </label>
        )}
        <label className="check">
          <input type="checkbox" checked={includeRevoked} onChange={(e) => setIncludeRevoked(e.target.checked)} />
          Include revoked keys
        </label>
      </div>
      <Loading loading={keys.loading} />
      <ErrorBox error={keys.error ?? error} />
      {keys.data && (
        <table aria-label="Keys">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Prefix</th>
              <th scope="col">User</th>
              <th scope="col">Created</th>
              <th scope="col">Expires</th>
              <th scope="col">Last used</th>
              <th scope="col">Models</th>
              <th scope="col">Status</th>
              <th scope="col">
                <span className="sr-only">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {keys.data.items.length === 0 && (
              <tr>
                <td colSpan={9} className="muted">
                  No keys.
                </td>
              </tr>
            )}
            {keys.data.items.map((key) => (
              <tr key={key.id}>
                <th scope="row">{key.name}</th>
                <td>
                  <code>{key.prefix}</code>
                </td>
                <td>{key.userId}</td>
                <td>{when(key.createdAt)}</td>
                <td>{when(key.expiresAt)}</td>
                <td>{key.lastUsedAt ? when(key.lastUsedAt) : 'never'}</td>
                <td>{key.models ? key.models.join(', ') : 'all'}</td>
                <td>{key.revokedAt ? `revoked ${when(key.revokedAt)}` : key.expiresAt && key.expiresAt < new Date().toISOString() ? 'expired' : 'active'}</td>
                <td>
                  {!key.revokedAt && (
                    <>
                      {confirming === key.id ? (
                        <>
                          <button type="button" className="danger" onClick={() => void revoke(key.id)} aria-label={`Confirm revoking ${key.name}`}>
                            Confirm revoke
                          </button>
                          <button type="button" onClick={() => setConfirming(null)}>
                            Keep
                          </button>
                        </>
                      ) : (
                        <button type="button" onClick={() => setConfirming(key.id)} aria-label={`Revoke ${key.name}`}>
                          Revoke
                        </button>
                      )}
                    </>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </Page>
  );
}
