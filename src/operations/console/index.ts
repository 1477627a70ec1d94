// The operations the web console reads (issue 20) that no other area owns: the caller, API keys, the
// run list, the stored-response list and the DLP policy.
import type { Handler } from '../types';
import { getDlpPolicy } from './dlp-policy';
import { createKey, listKeys, revokeKey } from './keys';
import { listResponses } from './list-responses';
import { listRuns } from './list-runs';
import { getMe } from './me';

export const consoleHandlers: Readonly<Record<string, Handler>> = {
  getMe,
  listRuns,
  listKeys,
  createKey,
  revokeKey,
  listResponses,
  getDlpPolicy,
};
