// Who is signed in (GET /v1/me) and how: an API key typed into the sign-in form, or an SSO session
// (OpenID Connect, when GET /console/auth/config says so) whose bearer token POST /console/auth/session
// hands over once after the identity provider's redirect.
import { createContext, useContext } from 'react';
import type { Ok } from './api';

export type Me = Ok<'/v1/me', 'get'>;

export interface Session {
  me: Me;
  isAdmin: boolean;
  signOut: () => void;
}

export const SessionContext = createContext<Session | null>(null);

export function useSession(): Session {
  const session = useContext(SessionContext);
  if (!session) throw new Error('useSession outside a signed-in console');
  return session;
}
