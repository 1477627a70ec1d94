import { StrictMode, useCallback, useEffect, useMemo, useState } from 'react';
import { createRoot } from 'react-dom/client';
import { api, must, onUnauthorized, signedInVia, storedToken, storeToken } from './api';
import { Link, navigate, usePath } from './router';
import { SessionContext, type Me, type Session } from './session';
import { SignIn } from './pages/SignIn';
import { ModelsPage } from './pages/Models';
import { KeysPage } from './pages/Keys';
import { AgentPage, AgentsPage } from './pages/Agents';
import { RunPage, RunsPage } from './pages/Runs';
import { ConversationPage, ConversationsPage } from './pages/Conversations';
import { AuditPage } from './pages/Audit';
import { UsagePage } from './pages/Usage';
import { DlpPage } from './pages/Dlp';
import './styles.css';

interface NavItem {
  path: string;
  label: string;
  admin?: boolean;
}

const NAV: NavItem[] = [
  { path: '/runs', label: 'Runs' },
  { path: '/agents', label: 'Agents' },
  { path: '/conversations', label: 'Conversations' },
  { path: '/models', label: 'Models' },
  { path: '/keys', label: 'API keys' },
  { path: '/usage', label: 'Usage and cost' },
  { path: '/audit', label: 'Audit', admin: true },
  { path: '/dlp', label: 'DLP', admin: true },
];

function Routed({ path, isAdmin }: { path: string; isAdmin: boolean }) {
  const [, section, id] = path.split('/').map((part) => decodeURIComponent(part));
  switch (section) {
    case 'models':
      return <ModelsPage />;
    case 'keys':
      return <KeysPage />;
    case 'agents':
      return id ? <AgentPage agentId={id} /> : <AgentsPage />;
    case 'runs':
      return id ? <RunPage runId={id} /> : <RunsPage />;
    case 'conversations':
      return id ? <ConversationPage responseId={id} /> : <ConversationsPage />;
    case 'usage':
      return <UsagePage />;
    case 'audit':
      return isAdmin ? <AuditPage /> : <NotFound />;
    case 'dlp':
      return isAdmin ? <DlpPage /> : <NotFound />;
    default:
      return <NotFound />;
  }
}

function NotFound() {
  return (
    <section className="page">
      <h1>Not found</h1>
      <p>
        There is no such page. <Link to="/runs">Go to runs</Link>.
      </p>
    </section>
  );
}

function Shell({ session }: { session: Session }) {
  const path = usePath();
  useEffect(() => {
    if (path === '/' || path === '') navigate('/runs', true);
  }, [path]);
  const section = `/${path.split('/')[1] ?? ''}`;
  return (
    <div className="shell">
      <nav aria-label="Console" className="nav">
        <div className="brand">agent-gateway</div>
        <ul>
          {NAV.filter((item) => !item.admin || session.isAdmin).map((item) => (
            <li key={item.path}>
              <Link to={item.path} {...(section === item.path ? { 'aria-current': 'page' as const } : {})}>
                {item.label}
              </Link>
            </li>
          ))}
        </ul>
        <div className="who" aria-label="Signed in as">
          <div>{session.me.user.name}</div>
          <div className="muted">
            {session.me.organization.name} · {session.me.user.role}
          </div>
          <button type="button" className="link-button" onClick={session.signOut}>
            Sign out
          </button>
        </div>
      </nav>
      <main>
        <Routed path={path} isAdmin={session.isAdmin} />
      </main>
    </div>
  );
}

function App() {
  const [me, setMe] = useState<Me | null>(null);
  const [checking, setChecking] = useState(true);
  // A refused ticket exchange the sign-in page should explain (only rate_limited: the others mean no ticket).
  const [signInError, setSignInError] = useState<string | null>(null);

  const loadMe = useCallback(async (): Promise<boolean> => {
    if (storedToken() === null) return false;
    try {
      setMe(await must(api.GET('/v1/me')));
      return true;
    } catch {
      storeToken(null);
      setMe(null);
      return false;
    }
  }, []);

  useEffect(() => {
    void (async () => {
      if (!(await loadMe())) {
        // Back from the identity provider: the one-time ticket cookie buys the session's bearer token.
        const config = await api.GET('/console/auth/config').catch(() => null);
        if (config?.data?.oidc) {
          const session = await api.POST('/console/auth/session').catch(() => null);
          if (session?.data) {
            storeToken(session.data.token, 'sso');
            await loadMe();
          } else if (session?.response.status === 429) {
            setSignInError('rate_limited');
          }
        }
      }
      setChecking(false);
    })();
  }, [loadMe]);

  useEffect(
    () =>
      onUnauthorized(() => {
        storeToken(null);
        setMe(null);
      }),
    [],
  );

  const session = useMemo<Session | null>(() => {
    if (!me) return null;
    return {
      me,
      isAdmin: me.user.role === 'admin',
      signOut: () => {
        const sso = signedInVia() === 'sso';
        void (async () => {
          // An SSO session's token is ended on the gateway too; an API key stays valid (revoke it under API keys).
          if (sso) await api.POST('/console/auth/logout').catch(() => undefined);
          storeToken(null);
          setMe(null);
        })();
      },
    };
  }, [me]);

  if (checking) return <p className="muted center">Loading…</p>;
  if (!session) return <SignIn onSignedIn={loadMe} signInError={signInError} />;
  return (
    <SessionContext.Provider value={session}>
      <Shell session={session} />
    </SessionContext.Provider>
  );
}

const root = document.getElementById('root');
if (root) {
  createRoot(root).render(
    <StrictMode>
      <App />
    </StrictMode>,
  );
}
