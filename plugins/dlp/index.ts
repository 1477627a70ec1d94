// dlp: binds the caller's organization DLP policy to ctx.dlp. Handlers (model gateway) apply it to
// every text-bearing field of the request before anything leaves for an upstream; the counts per
// detector go to ctx.redactions for the audit record. Agent runs get the same policy through
// redactorFor().
import { definePlugin } from '../../src/pipeline/plugin';
import type { Redaction, Redactor, RequestContext } from '../../src/pipeline/context';
import { buildOrgRedactors } from './org-redactors';

export interface DlpPluginConfig {
  enabled: boolean;
}

/** The organization's redactor, counting what it replaces into the request's ctx.redactions. */
function countingRedactor(redactor: Redactor, ctx: RequestContext): Redactor {
  const counts: Record<string, number> = {};
  ctx.redactions = counts;
  return {
    redact(text: string): Redaction {
      const result = redactor.redact(text);
      for (const name in result.detectors) counts[name] = (counts[name] ?? 0) + (result.detectors[name] ?? 0);
      return result;
    },
  };
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
      "Data loss prevention. Each organization policy (organizations[].dlp: enabled, detectors among email, credit_card (Luhn), us_ssn, iban (mod 97), phone, secret_key, plus custom {name, pattern} in RE2 syntax, run in linear time) is compiled once at start-up; an organization without a dlp block has no policy (its text passes unchanged). Every text-bearing field of chat completions, Responses, legacy completions and Anthropic messages requests is inspected; matches become [REDACTED:<detector>] and the call's audit record counts them per detector. Content that cannot be inspected (binary or referenced files) is refused with 400. Fails closed: a request whose policy cannot be applied is rejected, never forwarded unredacted.",
    properties: {
      enabled: { type: 'boolean', default: true, description: "Apply the organizations' DLP policies to request text and agent run prompts." },
    },
  },
  create(_config, deps) {
    const redactors = buildOrgRedactors(deps.config);
    return {
      onRequest(ctx) {
        const redactor = ctx.principal ? redactors.forOrg(ctx.principal.orgId) : null;
        ctx.dlp = redactor ? countingRedactor(redactor, ctx) : null;
      },
      redactorFor: (orgId) => redactors.forOrg(orgId),
    };
  },
});
