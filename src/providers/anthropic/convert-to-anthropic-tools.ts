// OpenAI function tools → Anthropic tools (`parameters` becomes `input_schema`). Tools already in
// Anthropic's shape (from the /v1/messages format: `input_schema`, or server tools with a versioned
// `type` such as web_search_20250305) are forwarded as they are.
import { GatewayError } from '../../http/errors';
import type { AnthropicTool } from './anthropic-wire-types';

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

export function convertToAnthropicTools(tools: unknown): AnthropicTool[] {
  if (tools === undefined || tools === null) return [];
  if (!Array.isArray(tools)) throw new GatewayError('bad_request', 'tools must be an array.', { param: 'tools' });
  return tools.map((tool: unknown, i): AnthropicTool => {
    if (!isRecord(tool)) throw new GatewayError('bad_request', 'Each tool must be an object.', { param: `tools[${i}]` });
    const fn = tool['function'];
    if (tool['type'] === 'function' && isRecord(fn)) {
      if (typeof fn['name'] !== 'string') throw new GatewayError('bad_request', 'Function tools need function.name.', { param: `tools[${i}].function.name` });
      const converted: AnthropicTool = {
        name: fn['name'],
        input_schema: isRecord(fn['parameters']) ? fn['parameters'] : { type: 'object', properties: {} },
      };
      if (typeof fn['description'] === 'string') converted.description = fn['description'];
      if (tool['cache_control'] !== undefined) converted['cache_control'] = tool['cache_control'];
      return converted;
    }
    if (typeof tool['name'] === 'string') return tool as AnthropicTool;
    throw new GatewayError('bad_request', 'Only function tools can be sent to this provider.', { param: `tools[${i}]` });
  });
}
