// The Responses interface (POST /v1/responses and its reads) is described in the OpenAPI document so
// clients can be generated against the whole API, but no issue has built it yet. Until one does, its
// operations answer 501 in the nested envelope, saying so, instead of pretending to work.
import { GatewayError } from '../../http/errors';
import type { Handler } from '../types';

function notBuilt(what: string): Handler {
  return async () => {
    throw new GatewayError('not_implemented', `${what} is not available in this version of agent-gateway; use POST /v1/chat/completions.`);
  };
}

export const createResponse = notBuilt('The Responses interface (POST /v1/responses)');
export const getResponse = notBuilt('Stored responses (GET /v1/responses/{response_id})');
export const listResponseInputItems = notBuilt('Stored response input items (GET /v1/responses/{response_id}/input_items)');
