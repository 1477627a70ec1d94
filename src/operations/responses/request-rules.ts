// The rules of POST /v1/responses the route owns beyond its schema (spec "POST /v1/responses", rules
// 2, 3, 7 and the tools row): what a stateless request may carry, and which stateful forms this
// version serves. Checked before anything is resolved or sent.
import { GatewayError } from '../../http/errors';

type Body = Record<string, unknown>;

/** Rule 2: stateful means any of `store: true`, `conversation`, `previous_response_id`. */
export function isStateful(body: Body): boolean {
  return body['store'] === true || body['conversation'] !== undefined || body['previous_response_id'] !== undefined;
}

export function checkResponseRequest(body: Body): void {
  // Rule 3.
  if (body['conversation'] !== undefined && body['previous_response_id'] !== undefined) {
    throw new GatewayError('mutually_exclusive_parameters', 'conversation and previous_response_id cannot both be set; send one of them.', {
      param: 'previous_response_id',
    });
  }
  for (const field of ['conversation', 'previous_response_id'] as const) {
    if (body[field] !== undefined) {
      throw new GatewayError(
        'unsupported_parameter',
        `${field} (continuing a stored conversation) is not available in this version; send the whole history in input.`,
        { param: field },
      );
    }
  }
  if (body['background'] === true && isStateful(body)) {
    throw new GatewayError('unsupported_parameter', 'background: true is not supported on stateful requests (store, conversation, previous_response_id).', {
      param: 'background',
    });
  }
  const tools = body['tools'];
  if (Array.isArray(tools)) {
    tools.forEach((tool: unknown, index) => {
      const type = tool !== null && typeof tool === 'object' ? (tool as Body)['type'] : undefined;
      // mcp tools need the stateful path (spec tools row); a stateless request with them is refused.
      if (type === 'mcp' && !isStateful(body)) {
        throw new GatewayError('unsupported_tool_type', 'mcp tools need the stateful path (store: true); a stateless request cannot use them.', {
          param: `tools[${index}].type`,
        });
      }
    });
  }
}
