// Which configured user an ID token is: the user whose oidcSubject is the token's subject, else (only
// when the provider says the address is verified) the user without an oidcSubject whose email is the
// token's email. Anyone else is nobody here: they get no session.
import type { GatewayConfig, Role } from '../config/types';

export interface MappedUser {
  orgId: string;
  userId: string;
  name: string;
  role: Role;
}

export interface IdentityClaims {
  sub: string;
  email?: unknown;
  email_verified?: unknown;
}

export function mapClaimsToUser(config: GatewayConfig, claims: IdentityClaims): MappedUser | null {
  const users = config.organizations.flatMap((org) => org.users.map((user) => ({ org, user })));
  const bySubject = users.find(({ user }) => user.oidcSubject !== undefined && user.oidcSubject === claims.sub);
  // email_verified must be the boolean true: an unverified (or absent) claim proves nothing about the address.
  const email = claims.email_verified === true && typeof claims.email === 'string' ? claims.email.toLowerCase() : undefined;
  // A user pinned to a subject is that subject alone: another account showing the same address is not them.
  const byEmail =
    email === undefined
      ? undefined
      : users.find(({ user }) => user.oidcSubject === undefined && user.email !== undefined && user.email.toLowerCase() === email);
  const found = bySubject ?? byEmail;
  return found ? { orgId: found.org.id, userId: found.user.id, name: found.user.name, role: found.user.role } : null;
}
