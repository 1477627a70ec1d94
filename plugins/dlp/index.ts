// dlp: binds the caller's organization DLP policy to ctx.dlp. Handlers (model gateway, agent runs)
// apply it to message text before anything leaves for an upstream.
import { definePlugin } from '../../src/pipeline/plugin';
import { buildOrgRedactors } from './org-redactors';

export interface DlpPluginConfig {
  enabled: boolean;
}

export default definePlugin<DlpPluginConfig>({
  name: 'dlp',
  phase: 'inspect',
  order: 100,
  requires: [],
  failMode: 'closed',
  description: 'Redacts sensitive data (organizations[].dlp policy) from request text before it reaches a model',
  configSchema: {
    type: 'object',
    additionalProperties: false,
    description:
      'Data loss prevention. Each organization policy (organizations[].dlp: enabled, detectors among email, credit_card (Luhn), us_ssn, iban (mod 97), phone, secret_key, plus custom {name, pattern}) is compiled once at start-up; an organization without a dlp block gets every built-in detector. Matches become [REDACTED:<detector>]. Fails closed: a request whose policy cannot be applied is rejected, never forwarded unredacted.',
    properties: {
      enabled: { type: 'boolean', default: true, description: "Apply the organizations' DLP policies to request text." },
    },
  },
  create(_config, deps) {
    const redactors = buildOrgRedactors(deps.config);
    return {
      onRequest(ctx) {
        if (ctx.principal) ctx.dlp = redactors.forOrg(ctx.principal.orgId);
      },
    };
  },
});
