// The console's own operations (issue 20): sign-in (OpenID Connect and console sessions), and the reads
// no other area owns: the caller, API keys, the run list, the stored-response list and the DLP policy.
import type { Handler } from '../types';
import { completeConsoleOidcLogin, createConsoleSession, deleteConsoleSession, getConsoleAuthConfig, startConsoleOidcLogin } from './auth';
import { getDlpPolicy } from './dlp-policy';
import { createKey, listKeys, revokeKey } from './keys';
import { listResponses } from './list-responses';
import { listRuns } from './list-runs';
import { getMe } from './me';

export const consoleAuthHandlers: Readonly<Record<string, Handler>> = {
  getConsoleAuthConfig,
  startConsoleOidcLogin,
  completeConsoleOidcLogin,
  createConsoleSession,
  deleteConsoleSession,
};

export const consoleHandlers: Readonly<Record<string, Handler>> = {
  getMe,
  listRuns,
  listKeys,
  createKey,
  revokeKey,
  listResponses,
  getDlpPolicy,
};
