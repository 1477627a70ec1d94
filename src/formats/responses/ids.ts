// Ids of the objects this format mints, in OpenAI's prefixed forms (`resp_…`, `msg_…`, `fc_…`,
// `rs_…`): clients and stores key on them, and some SDKs check the prefix of a response id.
import { randomUUID } from 'node:crypto';

export type IdPrefix = 'resp' | 'msg' | 'fc' | 'fco' | 'rs' | 'cmp' | 'sc' | 'mcp' | 'mcpr';

/** A fresh id: the prefix and 32 random hex digits (randomUUID draws from a cached entropy pool). */
export function mintId(prefix: IdPrefix): string {
  return `${prefix}_${randomUUID().replaceAll('-', '')}`;
}
