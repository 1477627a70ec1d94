// POST /v1/messages: placeholder until the Anthropic Messages translation lands (next commit).
import { GatewayError } from '../../http/errors';
import type { Handler } from '../types';

export const createMessage: Handler = async () => {
  throw new GatewayError('not_implemented', 'createMessage is not built yet.');
};
