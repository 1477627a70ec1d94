// stripFields: removes client-side bookkeeping fields (LiteLLM / proxy metadata) from every
// upstream-bound body, so they never reach a provider that would reject or log them.
import { definePlugin } from '../../src/pipeline/plugin';
import { fieldStripper } from './strip';

export interface StripFieldsConfig {
  enabled: boolean;
  fields: string[];
}

export const DEFAULT_STRIPPED_FIELDS = ['metadata', 'litellm_metadata', 'proxy_server_request'];

export default definePlugin<StripFieldsConfig>({
  name: 'stripFields',
  phase: 'inspect',
  order: 200,
  requires: [],
  failMode: 'closed',
  description: 'Removes configured top-level fields from every upstream-bound request body',
  configSchema: {
    type: 'object',
    additionalProperties: false,
    description:
      'Deletes the listed top-level fields from every body sent to an upstream provider; a body it leaves unchanged is forwarded as the original bytes.',
    properties: {
      enabled: { type: 'boolean', default: true, description: 'Strip the fields.' },
      fields: {
        type: 'array',
        items: { type: 'string', minLength: 1 },
        default: DEFAULT_STRIPPED_FIELDS,
        description: 'Top-level request body fields removed before forwarding.',
      },
    },
  },
  create(config) {
    const transform = fieldStripper(config.fields);
    return {
      onRequest(ctx) {
        ctx.upstreamTransforms.push(transform);
      },
    };
  },
});
