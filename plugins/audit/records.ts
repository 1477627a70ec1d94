import { randomBytes, randomInt } from 'node:crypto';
import type { FinishInfo } from '../../src/pipeline/plugin';
import type { RequestContext, UsageReport } from '../../src/pipeline/context';
import { boundedRecord } from './bounded-record';

// A call's records are written as JSON text the moment it ends (json-batches.ts says why): the text of
// an AuditRecord and of UsageRecords (src/store/types.ts), built field by field. JSON.stringify of a
// record object cost ~2 µs per call and allocated its growing buffers, a template ~0.7 µs; tests parse
// the text back into the records.

/** 48 random bits per process: two processes' ids differ even in the same millisecond with the same count. */
const PROCESS_BITS = randomBytes(6).toString('hex');
/** 26 bits counted per id, from a random start: ids of one process differ within a millisecond. */
const COUNTER_MASK = 0x3ffffff;
let counter = randomInt(COUNTER_MASK + 1);
let idMillisecond = -1;
let idPrefix = '';

/**
 * A UUID version 7 (RFC 9562 §5.7): the millisecond time first, then a counter (§6.2, method 1, in
 * rand_a and the top of rand_b) and this process's random bits. Audit ids lead the audit table's
 * unique index: random (v4) ids land on random pages of a B-tree that outgrows the database's cache
 * within minutes of sustained traffic, each insert then reading and dirtying a page of its own; the
 * embedded store fell behind at ~10,000 calls/s that way. Time-ordered ids are appended at its right
 * edge. A crypto random UUID per call also cost ~0.5 µs; the counter ~0.1 µs.
 */
export function timeOrderedId(now = Date.now()): string {
  if (now !== idMillisecond) {
    idMillisecond = now;
    const time = now.toString(16).padStart(12, '0');
    idPrefix = `${time.slice(0, 8)}-${time.slice(8, 12)}-7`;
  }
  counter = (counter + 1) & COUNTER_MASK;
  // rand_a: the counter's top 12 bits; then the variant (binary 10) and its low 14 bits.
  return `${idPrefix}${(counter >>> 14).toString(16).padStart(3, '0')}-${(0x8000 | (counter & 0x3fff)).toString(16)}-${PROCESS_BITS}`;
}

let isoMillisecond = -1;
let isoText = '';

/** The current time as ISO 8601 text: calls finishing in the same millisecond share one string. */
export function isoNow(): string {
  const now = Date.now();
  if (now !== isoMillisecond) {
    isoMillisecond = now;
    isoText = new Date(now).toISOString();
  }
  return isoText;
}

/** Nothing to escape: no quote, backslash, control character or surrogate half (JSON.stringify's cases). */
const PLAIN = /^[^"\\\u0000-\u001f\ud800-\udfff]*$/;

/** A string as JSON text: quoted as it is when nothing in it needs escaping. */
const jsonText = (value: string): string => (PLAIN.test(value) ? `"${value}"` : JSON.stringify(value));
const jsonTextOrNull = (value: string | null): string => (value === null ? 'null' : jsonText(value));

/** `,"redactions":{...}` when the DLP policy replaced anything (detector names are [A-Za-z0-9_]), else ''. */
function redactionsJson(ctx: RequestContext): string {
  const counts = ctx.redactions;
  if (counts === null) return '';
  for (const _ in counts) return `,"redactions":${JSON.stringify(counts)}`;
  return '';
}

/** The JSON text of an empty resource-id map, the common case (routes without path ids). */
const NO_IDS = '{}';

/** A call's token counts, cached prompt tokens and cost (when priced) as JSON members, after a comma. */
function usageFieldsJson(usage: UsageReport): string {
  const counts = `,"promptTokens":${String(usage.promptTokens)},"completionTokens":${String(usage.completionTokens)},"cachedPromptTokens":${String(usage.cachedPromptTokens)}`;
  return usage.cost === null ? counts : `${counts},"cost":${String(usage.cost)}`;
}

/** The model call's part of an audit record: model, provider, token counts (own usage only), error code. */
function modelCallJson(ctx: RequestContext, usage: UsageReport | null): string {
  const call = ctx.modelCall;
  const model = call?.model ?? usage?.model;
  let json = model === undefined ? '' : `,"model":${jsonText(model)}`;
  if (call) json += `,"provider":${jsonText(call.provider)}`;
  if (usage) json += usageFieldsJson(usage);
  const errorCode = ctx.error?.code ?? call?.errorCode ?? null;
  if (errorCode !== null) json += `,"errorCode":${jsonText(errorCode)}`;
  return json;
}

/**
 * The audit record of a finished call, as the JSON text of an AuditRecord: who, what (route template,
 * never the raw URL), outcome, timing, and for a model call what it called and how it ended. Never the
 * key. `usage`: the call's one upstream call's token usage, carried in the record instead of a usage
 * record of its own. At most AUDIT_RECORD_MAX_BYTES (bounded-record.ts).
 */
export function auditJsonOf(ctx: RequestContext, info: FinishInfo, at: string, usage: UsageReport | null = null): string {
  const principal = ctx.principal;
  const route = ctx.route;
  const latencyMs = Math.round(Number(process.hrtime.bigint() - ctx.startedAt) / 1e3) / 1e3;
  let resourceIds = NO_IDS;
  for (const _ in ctx.resourceIds) {
    resourceIds = JSON.stringify(ctx.resourceIds);
    break;
  }
  return boundedRecord(
    `{"id":"${timeOrderedId()}","at":"${at}",` +
      `"orgId":${principal ? jsonText(principal.orgId) : 'null'},"userId":${principal ? jsonText(principal.userId) : 'null'},` +
      `"keyId":${principal ? jsonTextOrNull(principal.keyId) : 'null'},"method":${jsonText(route.method.toUpperCase())},` +
      `"route":${jsonText(route.template)},"operationId":${jsonText(route.operationId)},"resourceIds":${resourceIds},` +
      `"status":${String(info.status)},"latencyMs":${String(latencyMs)},"requestId":${jsonText(ctx.requestId)}` +
      redactionsJson(ctx) +
      (usage === null && ctx.modelCall === null && ctx.error === null ? '}' : `${modelCallJson(ctx, usage)}}`),
  );
}

/** The usage records of the upstream calls a request made, each as the JSON text of a UsageRecord (none without an organization). */
export function usageJsonOf(ctx: RequestContext, at: string): readonly string[] {
  const principal = ctx.principal;
  if (!principal || ctx.usage.length === 0) return NO_USAGE;
  const who = `{"at":"${at}","orgId":${jsonText(principal.orgId)},"userId":${jsonText(principal.userId)},"keyId":${jsonTextOrNull(principal.keyId)},`;
  const requestId = jsonText(ctx.requestId);
  return ctx.usage.map((u) => `${who}"model":${jsonText(u.model)}${usageFieldsJson(u)},"requestId":${requestId}}`);
}

/** No usage records (shared: never written to). */
export const NO_USAGE: readonly string[] = [];
