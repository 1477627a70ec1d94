import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { GatewayError } from '../../http/errors';
import type { Handler } from '../types';

// The document is generated at build time; it is read once and served as bytes.
let documentText: Promise<string> | undefined;
/** The bundled OpenAPI document as text (src/generated/openapi.json, from either src/ or dist/src/). */
export function openapiText(): Promise<string> {
  documentText ??= readFile(path.join(__dirname, '../../generated/openapi.json'), 'utf8').catch(() =>
    readFile(path.join(__dirname, '../../../../src/generated/openapi.json'), 'utf8'),
  );
  return documentText;
}

let servedText: Promise<string> | undefined;
/**
 * The document as served: its `servers` is the relative URL "/", which a client (the /docs page's
 * "Try it out") resolves against the address it fetched the document from, so calls go to the gateway
 * that served it whatever its host and port. The file's own `servers` names the default installation.
 * Relative rather than built from the Host header: a client-chosen header never lands in the document.
 */
function servedOpenapiText(): Promise<string> {
  servedText ??= openapiText().then((text) => {
    const document = JSON.parse(text) as Record<string, unknown>;
    return JSON.stringify({ ...document, servers: [{ url: '/', description: 'The gateway that serves this document.' }] }, null, 2);
  });
  return servedText;
}

export const getOpenApiDocument: Handler = async () => ({
  status: 200,
  raw: { contentType: 'application/json; charset=utf-8', data: await servedOpenapiText() },
});

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>agent-gateway API reference</title>
<link rel="stylesheet" href="/docs/assets/swagger-ui.css">
</head>
<body>
<div id="api-reference"></div>
<script src="/docs/assets/swagger-ui-bundle.js"></script>
<script>
window.ui = SwaggerUIBundle({ url: '/openapi.json', dom_id: '#api-reference', deepLinking: true });
</script>
</body>
</html>
`;

export const getApiReference: Handler = async () => ({
  status: 200,
  headers: { 'cache-control': 'no-cache' },
  raw: { contentType: 'text/html; charset=utf-8', data: PAGE },
});

const ASSET_TYPES: Record<string, string> = {
  'swagger-ui-bundle.js': 'application/javascript; charset=utf-8',
  'swagger-ui-standalone-preset.js': 'application/javascript; charset=utf-8',
  'swagger-ui.css': 'text/css; charset=utf-8',
};
const assets = new Map<string, Promise<Buffer>>();

/** Serves the reference page's assets from the installed swagger-ui-dist package (nothing fetched at run time). */
export const getApiReferenceAsset: Handler = async (ctx) => {
  const name = ctx.params['asset'] ?? '';
  const type = ASSET_TYPES[name];
  if (!type) throw new GatewayError('not_found', `No asset named ${name}.`);
  let data = assets.get(name);
  if (!data) {
    data = readFile(path.join(path.dirname(require.resolve('swagger-ui-dist/package.json')), name));
    assets.set(name, data);
  }
  return { status: 200, headers: { 'cache-control': 'public, max-age=86400' }, raw: { contentType: type, data: await data } };
};
