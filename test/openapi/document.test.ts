// The OpenAPI document is the source of truth: it lints clean with Redocly's recommended ruleset,
// defines exactly the operations of the brief with their envelopes and security, declares every
// response header the service sends, and maps one to one onto the handlers.
import assert from 'node:assert/strict';
import path from 'node:path';
import type { OpenAPIV3_1 } from 'openapi-types';
import { routes } from '../../src/generated/routes';
import { handlers } from '../../src/operations/index';
import { derefIn, loadGeneratedDocument } from '../helpers/openapi-document';

const ROOT = path.resolve(__dirname, '../..');
const doc = loadGeneratedDocument();

/** The fixed operation table of the brief: operationId -> [method, path, envelope, authenticated]. */
const OPERATIONS: Record<string, [string, string, 'flat' | 'openai' | 'anthropic', boolean]> = {
  getLiveness: ['get', '/health/live', 'openai', false],
  getReadiness: ['get', '/health/ready', 'openai', false],
  getMetrics: ['get', '/metrics', 'openai', false],
  getOpenApiDocument: ['get', '/openapi.json', 'openai', false],
  getApiReference: ['get', '/docs', 'openai', false],
  getApiReferenceAsset: ['get', '/docs/assets/{asset}', 'openai', false],
  getConsole: ['get', '/console', 'openai', false],
  getConsoleFile: ['get', '/console/{path}', 'openai', false],
  listModels: ['get', '/v1/models', 'openai', true],
  createResponse: ['post', '/v1/responses', 'openai', true],
  getResponse: ['get', '/v1/responses/{response_id}', 'openai', true],
  listResponseInputItems: ['get', '/v1/responses/{response_id}/input_items', 'openai', true],
  listAgents: ['get', '/v1/agents/list', 'flat', true],
  getAgent: ['get', '/v1/agents/{agentId}', 'flat', true],
  getAgentWebhooks: ['get', '/v1/agents/{agentId}/webhooks', 'flat', true],
  createRun: ['post', '/v1/agents/runs', 'flat', true],
  getRun: ['get', '/v1/runs/{runId}', 'flat', true],
  restartRun: ['post', '/v1/runs/{runId}/restart', 'flat', true],
  getRunEvals: ['get', '/v1/runs/{runId}/evals', 'flat', true],
  cancelRun: ['post', '/v1/runs/{runId}/cancel', 'flat', true],
  retryRun: ['post', '/v1/runs/{runId}/retry', 'flat', true],
  listConversationItems: ['get', '/v1/conversations/{conversation_id}/items', 'openai', true],
  triggerWebhook: ['post', '/v1/webhooks/{token}', 'flat', false],
  createChatCompletion: ['post', '/v1/chat/completions', 'openai', true],
  createCompletion: ['post', '/v1/completions', 'openai', true],
  createMessage: ['post', '/v1/messages', 'anthropic', true],
  listAuditRecords: ['get', '/v1/admin/audit', 'flat', true],
  createFile: ['post', '/v1/files', 'openai', true],
  listFiles: ['get', '/v1/files', 'openai', true],
  retrieveFile: ['get', '/v1/files/{file_id}', 'openai', true],
  deleteFile: ['delete', '/v1/files/{file_id}', 'openai', true],
  downloadFile: ['get', '/v1/files/{file_id}/content', 'openai', true],
  downloadSharedFile: ['get', '/v1/files/{file_id}/shared', 'openai', false],
  createKnowledgeStore: ['post', '/v1/knowledge_stores', 'openai', true],
  listKnowledgeStores: ['get', '/v1/knowledge_stores', 'openai', true],
  getKnowledgeStore: ['get', '/v1/knowledge_stores/{store_id}', 'openai', true],
  deleteKnowledgeStore: ['delete', '/v1/knowledge_stores/{store_id}', 'openai', true],
  addKnowledgeDocument: ['post', '/v1/knowledge_stores/{store_id}/documents', 'openai', true],
  listKnowledgeDocuments: ['get', '/v1/knowledge_stores/{store_id}/documents', 'openai', true],
  getKnowledgeDocument: ['get', '/v1/knowledge_stores/{store_id}/documents/{document_id}', 'openai', true],
  deleteKnowledgeDocument: ['delete', '/v1/knowledge_stores/{store_id}/documents/{document_id}', 'openai', true],
  searchKnowledgeStore: ['post', '/v1/knowledge_stores/{store_id}/search', 'openai', true],
  listDashboards: ['get', '/v1/dashboards', 'openai', true],
  getDashboard: ['get', '/v1/dashboards/{dashboard_id}', 'openai', true],
  deleteDashboard: ['delete', '/v1/dashboards/{dashboard_id}', 'openai', true],
  viewDashboard: ['get', '/v1/dashboards/{dashboard_id}/view', 'openai', false],
  getDashboardAsset: ['get', '/v1/dashboard_assets/{asset}', 'openai', false],
  getUsage: ['get', '/v1/usage', 'flat', true],
  getUsageBudgets: ['get', '/v1/usage/budgets', 'flat', true],
  getMe: ['get', '/v1/me', 'flat', true],
  listRuns: ['get', '/v1/runs', 'flat', true],
  listKeys: ['get', '/v1/keys', 'flat', true],
  createKey: ['post', '/v1/keys', 'flat', true],
  revokeKey: ['delete', '/v1/keys/{keyId}', 'flat', true],
  listResponses: ['get', '/v1/responses', 'openai', true],
  getDlpPolicy: ['get', '/v1/admin/dlp', 'flat', true],
  getConsoleAuthConfig: ['get', '/console/auth/config', 'flat', false],
  startConsoleOidcLogin: ['get', '/console/auth/oidc/login', 'flat', false],
  completeConsoleOidcLogin: ['get', '/console/auth/oidc/callback', 'flat', false],
  createConsoleSession: ['post', '/console/auth/session', 'flat', false],
  deleteConsoleSession: ['post', '/console/auth/logout', 'flat', true],
};
const CONSOLE_AUTH = ['getConsoleAuthConfig', 'startConsoleOidcLogin', 'completeConsoleOidcLogin', 'createConsoleSession', 'deleteConsoleSession'];
const KNOWLEDGE_AND_DASHBOARDS = Object.keys(OPERATIONS).filter((id) => /Knowledge|Dashboard/.test(id));
const CONSOLE_API = ['getMe', 'listRuns', 'listKeys', 'createKey', 'revokeKey', 'listResponses', 'getDlpPolicy'];
const EXTENSIONS = [
  'getConsole',
  'getConsoleFile',
  'getAgentWebhooks',
  'cancelRun',
  'retryRun',
  'triggerWebhook',
  'listAuditRecords',
  'downloadSharedFile',
  'getUsage',
  'getUsageBudgets',
  ...KNOWLEDGE_AND_DASHBOARDS,
  ...CONSOLE_API,
  ...CONSOLE_AUTH,
];
/** Operations the web console reads (`x-console: true`). */
const CONSOLE = [
  ...CONSOLE_API,
  ...CONSOLE_AUTH,
  'listAuditRecords',
  'getUsage',
  'getUsageBudgets',
  'listModels',
  'listAgents',
  'getAgent',
  'createRun',
  'getRun',
  'getRunEvals',
  'listConversationItems',
  'restartRun',
  'cancelRun',
  'retryRun',
  'getResponse',
  'listResponseInputItems',
];
const ERROR_SCHEMA = { flat: 'FlatError', openai: 'OpenAIError', anthropic: 'AnthropicError' } as const;

interface Operation {
  id: string;
  method: string;
  template: string;
  op: OpenAPIV3_1.OperationObject & Record<string, unknown>;
}

function operations(): Operation[] {
  const out: Operation[] = [];
  for (const [template, item] of Object.entries(doc.paths ?? {})) {
    for (const method of ['get', 'post', 'put', 'patch', 'delete'] as const) {
      const op = item?.[method];
      if (op) out.push({ id: op.operationId ?? '', method, template, op: op as Operation['op'] });
    }
  }
  return out;
}

const deref = <T>(value: unknown): T => derefIn<T>(doc, value);

describe('OpenAPI document', () => {
  it('lints clean with the Redocly recommended ruleset', async function () {
    this.timeout(30_000);
    const redocly = await import('@redocly/openapi-core');
    const config = await redocly.createConfig({ extends: ['recommended'] });
    const problems = await redocly.lint({ ref: path.join(ROOT, 'openapi/openapi.yaml'), config });
    // An accepted warning: operation-4xx-response on the unauthenticated meta endpoints (and the console's
    // sign-in config). They read no parameters, body or key, so no client error exists to document
    // (inventing one would be a lie).
    const pointer = (p: string) => `#/paths/${p.replace(/~/g, '~0').replace(/\//g, '~1')}/get/responses`;
    const exempt = ['/health/live', '/health/ready', '/metrics', '/openapi.json', '/docs', '/console/auth/config'].map(pointer);
    // The other accepted warning: operation-2xx-response on the console's sign-in redirects, whose only
    // success is a 302 (to the provider, or back to the console).
    const redirects = ['/console/auth/oidc/login', '/console/auth/oidc/callback'].map(pointer);
    const remaining = problems.filter(
      (p) =>
        !(p.ruleId === 'operation-4xx-response' && exempt.includes(p.location[0]?.pointer ?? '')) &&
        !(p.ruleId === 'operation-2xx-response' && redirects.includes(p.location[0]?.pointer ?? '')),
    );
    assert.deepEqual(
      remaining.map((p) => `${p.severity} ${p.ruleId}: ${p.message} at ${p.location[0]?.pointer ?? '?'}`),
      [],
    );
  });

  it('is OpenAPI 3.1 and defines exactly the operations of the brief, at their paths', () => {
    assert.match(doc.openapi, /^3\.1\./);
    const found = Object.fromEntries(operations().map((o) => [o.id, [o.method, o.template]]));
    const expected = Object.fromEntries(Object.entries(OPERATIONS).map(([id, [method, template]]) => [id, [method, template]]));
    assert.deepEqual(found, expected);
  });

  it('declares the error envelope family, the security and the extension tag of every operation', () => {
    for (const { id, op } of operations()) {
      const [, , family, authenticated] = OPERATIONS[id]!;
      assert.equal(op['x-error-envelope'], family, `${id} envelope`);
      const security = op.security ?? doc.security ?? [];
      assert.equal(security.length > 0, authenticated, `${id} security`);
      assert.equal((op.tags ?? []).includes('extension'), EXTENSIONS.includes(id), `${id} extension tag`);
      // The vendor extension is `true` or absent, never another value.
      assert.equal(op['x-console'], CONSOLE.includes(id) ? true : undefined, `${id} x-console`);
    }
    const route = routes.find((r) => r.operationId === 'triggerWebhook');
    assert.equal(route?.authenticated, false);
    assert.equal(route?.family, 'flat');
  });

  it('accepts any one of the three key headers', () => {
    const schemes = doc.components?.securitySchemes ?? {};
    const headers = Object.values(schemes).map((s) => {
      const scheme = s as OpenAPIV3_1.SecuritySchemeObject;
      return scheme.type === 'http' ? `authorization:${scheme.scheme}` : scheme.type === 'apiKey' ? `${scheme.in}:${scheme.name}` : scheme.type;
    });
    assert.deepEqual(headers.sort(), ['authorization:bearer', 'header:api-key', 'header:x-api-key']);
    // Alternatives (any one satisfies): one requirement object per scheme.
    assert.deepEqual(
      (doc.security ?? []).map((r) => Object.keys(r)),
      Object.keys(schemes).map((k) => [k]),
    );
  });

  it('declares X-Request-Id on every response, Retry-After on every 429, and the family envelope on every error', () => {
    for (const { id, op } of operations()) {
      const [, , family] = OPERATIONS[id]!;
      for (const [status, responseOrRef] of Object.entries(op.responses ?? {})) {
        const response = deref<OpenAPIV3_1.ResponseObject>(responseOrRef);
        assert.ok(response.headers?.['X-Request-Id'], `${id} ${status} X-Request-Id`);
        if (status === '429') assert.ok(response.headers?.['Retry-After'], `${id} 429 Retry-After`);
        if (Number(status) >= 400 && Number(status) !== 503) {
          const ref = (response.content?.['application/json']?.schema as { $ref?: string } | undefined)?.$ref;
          // Authentication failures are always flat (spec: Authentication rule 4).
          const want = status === '401' ? 'FlatError' : ERROR_SCHEMA[family];
          assert.equal(ref, `#/components/schemas/${want}`, `${id} ${status} envelope`);
        }
      }
    }
  });

  it('lists the status codes of the spec on the agent, run and eval operations', () => {
    for (const id of ['getAgent', 'getRun', 'getRunEvals', 'restartRun']) {
      const statuses = Object.keys(operations().find((o) => o.id === id)!.op.responses ?? {});
      for (const s of ['400', '401', '404', '429', '500']) assert.ok(statuses.includes(s), `${id} ${s}`);
    }
    const createRun = Object.keys(operations().find((o) => o.id === 'createRun')!.op.responses ?? {});
    for (const s of ['202', '400', '401', '404', '422', '429', '500']) assert.ok(createRun.includes(s), `createRun ${s}`);
  });

  it('declares the streaming operations as text/event-stream', () => {
    const streaming = routes
      .filter((r) => r.streams)
      .map((r) => r.operationId)
      .sort();
    assert.deepEqual(streaming, ['createChatCompletion', 'createCompletion', 'createMessage', 'createResponse', 'getResponse']);
  });

  it('maps every operation to a handler and every handler to an operation', () => {
    const operationIds = operations()
      .map((o) => o.id)
      .sort();
    assert.deepEqual(Object.keys(handlers).sort(), operationIds);
    assert.deepEqual(routes.map((r) => r.operationId).sort(), operationIds);
  });
});
