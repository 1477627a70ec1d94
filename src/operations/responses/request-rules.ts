// The rules of POST /v1/responses the route owns beyond its schema (spec "POST /v1/responses", rules
// 2, 3, 7 and the tools row): what a stateless or stateful request may carry. Checked before anything
// is resolved or sent.
import { GatewayError } from '../../http/errors';

type Body = Record<string, unknown>;

/** Set and not null (SDKs send `null` for an absent optional field). */
const given = (value: unknown): boolean => value !== undefined && value !== null;

/** Rule 2: stateful means any of `store: true`, `conversation`, `previous_response_id`. */
export function isStateful(body: Body): boolean {
  return body['store'] === true || given(body['conversation']) || given(body['previous_response_id']);
}

export function checkResponseRequest(body: Body): void {
  // Rule 3.
  if (given(body['conversation']) && given(body['previous_response_id'])) {
    throw new GatewayError('mutually_exclusive_parameters', 'conversation and previous_response_id cannot both be set; send one of them.', {
      param: 'previous_response_id',
    });
  }
  const model = body['model'];
  if (typeof model === 'string' && model.startsWith('agent/')) {
    throw new GatewayError(
      'unsupported_parameter',
      'Invoking an agent through the Responses interface (model agent/<agent_id>) is not available in this version; trigger it with POST /v1/agents/runs.',
      { param: 'model' },
    );
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
