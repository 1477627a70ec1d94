// One row of the route table: what the generator (openapi/build-artifacts.ts) derives from each
// OpenAPI operation and the router (dispatch.ts) serves. It lives with the router so that the request
// path never imports the generator; the generator imports this type.
import type { EnvelopeFamily } from './errors';

export const ROUTE_METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;

export interface RouteSpec {
  operationId: string;
  method: (typeof ROUTE_METHODS)[number];
  /** OpenAPI template, e.g. /v1/runs/{runId} (audit records use it). */
  template: string;
  /** Express path, e.g. /v1/runs/:runId */
  expressPath: string;
  family: EnvelopeFamily;
  /** false when the operation declares `security: []` (health, docs). */
  authenticated: boolean;
  /** Validator export names in validators.js. */
  bodyValidator: string | null;
  bodyRequired: boolean;
  /** The body is multipart/form-data, read by the handler itself (a file upload), not drained here. */
  multipartBody: boolean;
  paramsValidator: string | null;
  queryValidator: string | null;
  /** Names of path parameters. */
  pathParams: string[];
  /** Path parameters recorded in audit records once validated: all but those marked `x-secret`. */
  auditedParams: string[];
  /** The operation may answer text/event-stream. */
  streams: boolean;
  tags: string[];
}
