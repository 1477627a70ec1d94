// Handlers by operationId. Boot fails when an operation of the OpenAPI document has no handler here,
// or a handler names no operation (src/app.ts). Each area exports its own map.
import { adminHandlers } from './admin/index';
import { agentHandlers } from './agents/index';
import { consoleAuthHandlers, consoleHandlers } from './console/index';
import { fileHandlers } from './files/index';
import { dashboardHandlers } from './dashboards/index';
import { gatewayHandlers } from './gateway/index';
import { knowledgeHandlers } from './knowledge/index';
import { getConsole, getConsoleFile } from './meta/console';
import { getApiReference, getApiReferenceAsset, getOpenApiDocument } from './meta/docs';
import { getLiveness, getMetrics, getReadiness } from './meta/health';
import { listModels } from './models/list-models';
import { createResponse } from './responses/create-response';
import { getResponse, listResponseInputItems } from './responses/stored';
import { usageHandlers } from './usage/index';
import type { Handler } from './types';

export const handlers: Readonly<Record<string, Handler>> = {
  getLiveness,
  getReadiness,
  getMetrics,
  getOpenApiDocument,
  getApiReference,
  getApiReferenceAsset,
  getConsole,
  getConsoleFile,
  listModels,
  createResponse,
  getResponse,
  listResponseInputItems,
  ...agentHandlers,
  ...gatewayHandlers,
  ...adminHandlers,
  ...fileHandlers,
  ...knowledgeHandlers,
  ...dashboardHandlers,
  ...usageHandlers,
  ...consoleHandlers,
  ...consoleAuthHandlers,
};
