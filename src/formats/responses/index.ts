// Client format POST /v1/responses: the caller's Responses wire ⇄ the canonical model. Pure
// converters (no HTTP): the request, the whole response object, the SSE event sequence, and DLP on
// the wire body. This folder never imports providers (nor they it).
export { responsesRequestToCanonical, HANDLER_FIELDS } from './responses-request-to-canonical';
export { canonicalToResponseObject, echoRequestFields, usageToResponses, type ResponseContext } from './response-object';
export { ResponsesEventStream, type ResponsesEventStreamContext } from './responses-event-stream';
export { mintId } from './ids';
export type * from './wire-types';
export { redactResponsesRequest } from './redact-responses-request';
