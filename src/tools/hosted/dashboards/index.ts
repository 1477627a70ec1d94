// svc_dashboard_generate, svc_dashboard_update: a Vega-Lite chart of given records, checked by
// compiling and drawing it server-side (check-chart.ts), stored per organization (versioned), and
// served by the gateway as a page through a signed, expiring link (src/dashboards/links.ts) that the
// call's output carries, with the spec as JSON and a PNG (headless Chromium) beside it.
import { constants } from 'node:fs';
import { access } from 'node:fs/promises';
import { newDashboardId } from '../../../dashboards/ids';
import { dashboardLinkSecret, signDashboardLink } from '../../../dashboards/links';
import { publicBaseUrl } from '../../../files/share-link';
import type { DashboardRecord } from '../../../store/tool-records';
import { ToolFailure, type HostedTool, type HostedToolFactory, type ToolCallContext, type ToolDeps } from '../../types';
import { chartRecords, jsonText, type ChartRecords } from './chart-data';
import { checkChart, type ChartCheck } from './check-chart';

const MAX_SPEC_BYTES = 512 * 1024;
const MAX_TITLE = 200;
/** Tries of an update that lost its compare-and-set to another update of the same dashboard. */
const UPDATE_ATTEMPTS = 3;

const SPEC_DESCRIPTION = 'A Vega-Lite (v6) spec: mark, encoding, transform, layer, facet… Its data is filled in from the records given; do not give data.url.';
const DATA_SCHEMA = { type: 'array', items: { type: 'object' }, description: 'The records to chart, one JSON object per row.' };
const CSV_SCHEMA = { type: 'string', description: 'The records as CSV text with a header row (instead of data); numbers are cast.' };

function title(args: Record<string, unknown>, required: boolean): string | undefined {
  const value = args['title'];
  if (value === undefined && !required) return undefined;
  if (typeof value !== 'string' || value.trim() === '') throw new ToolFailure('Argument title must be a non-empty string.');
  if (value.length > MAX_TITLE || value.includes('\0')) throw new ToolFailure(`Argument title must be at most ${MAX_TITLE} characters, without NUL.`);
  return value.trim();
}

/** The spec without its top-level data (the records are kept apart and filled in when served). */
function specArg(args: Record<string, unknown>, required: boolean): Record<string, unknown> | undefined {
  const value = args['spec'];
  if (value === undefined && !required) return undefined;
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new ToolFailure('Argument spec must be a Vega-Lite spec (a JSON object).');
  const { text, nul } = jsonText(value);
  if (Buffer.byteLength(text) > MAX_SPEC_BYTES) throw new ToolFailure(`The spec is larger than ${MAX_SPEC_BYTES} bytes; give the data as data or csv.`);
  if (nul) throw new ToolFailure('The spec contains a NUL character, which cannot be stored.');
  return value as Record<string, unknown>;
}

function withoutData(spec: Record<string, unknown>): Record<string, unknown> {
  const { data: _data, ...rest } = spec;
  return rest;
}

async function describe(deps: ToolDeps, ctx: ToolCallContext, dashboard: DashboardRecord, check: ChartCheck): Promise<string> {
  const expiresAt = Math.floor(deps.now().getTime() / 1000) + deps.config.tools.dashboards.linkTtlSeconds;
  const link = signDashboardLink(await dashboardLinkSecret(deps.store), publicBaseUrl(deps.config.server, ctx.baseUrl), dashboard.id, expiresAt);
  const chromium = await access(deps.config.tools.browser.executablePath, constants.X_OK).then(
    () => true,
    () => false,
  );
  return JSON.stringify({
    dashboard_id: dashboard.id,
    version: dashboard.version,
    title: dashboard.title,
    url: link.url,
    spec_url: `${link.url}&format=json`,
    ...(chromium ? { png_url: `${link.url}&format=png` } : {}),
    link_expires_at: new Date(link.expiresAt * 1000).toISOString(),
    rows: dashboard.data.length,
    marks: check.marks,
    ...(check.marks === 0 ? { note: 'The chart draws no marks: check the field names and filters against the data.' } : {}),
    ...(check.warnings.length > 0 ? { warnings: check.warnings } : {}),
  });
}

function generateTool(deps: ToolDeps): HostedTool {
  return {
    type: 'svc_dashboard_generate',
    description:
      'Make a dashboard: a chart drawn from records with a Vega-Lite spec, checked, stored, and served by the gateway as a web page. ' +
      'Returns its dashboard_id and a link to share with the user (the page, the spec as JSON, a PNG). Update it with svc_dashboard_update.',
    parameters: {
      type: 'object',
      properties: {
        title: { type: 'string', maxLength: MAX_TITLE, description: 'The dashboard title.' },
        data: DATA_SCHEMA,
        csv: CSV_SCHEMA,
        spec: { type: 'object', description: SPEC_DESCRIPTION },
      },
      required: ['title', 'spec'],
      additionalProperties: false,
    },
    async execute(args, ctx) {
      const limits = deps.config.tools.dashboards;
      const name = title(args, true)!;
      const spec = specArg(args, true)!;
      const records = chartRecords(args, spec, limits);
      if (records === undefined) throw new ToolFailure('Give the records to chart as data (an array of objects) or csv.');
      const stored = withoutData(spec);
      const check = await checkChart(stored, records);
      const at = deps.now().toISOString();
      const dashboard: DashboardRecord = {
        id: newDashboardId(),
        orgId: ctx.orgId,
        title: name,
        spec: stored,
        data: records,
        version: 1,
        createdBy: ctx.userId,
        conversationId: ctx.conversationId,
        createdAt: at,
        updatedAt: at,
      };
      await deps.store.dashboards.create(dashboard);
      return { output: await describe(deps, ctx, dashboard, check) };
    },
  };
}

function updateTool(deps: ToolDeps): HostedTool {
  return {
    type: 'svc_dashboard_update',
    description:
      'Change a dashboard made by svc_dashboard_generate: its title, its records (data or csv) and/or its Vega-Lite spec; what is not given is kept. ' +
      'The same link shows the new version.',
    parameters: {
      type: 'object',
      properties: {
        dashboard_id: { type: 'string', description: 'The id svc_dashboard_generate returned.' },
        title: { type: 'string', maxLength: MAX_TITLE, description: 'A new title.' },
        data: DATA_SCHEMA,
        csv: CSV_SCHEMA,
        spec: { type: 'object', description: `A new spec. ${SPEC_DESCRIPTION}` },
      },
      required: ['dashboard_id'],
      additionalProperties: false,
    },
    async execute(args, ctx) {
      const id = args['dashboard_id'];
      if (typeof id !== 'string' || id === '') throw new ToolFailure('Argument dashboard_id must be the id svc_dashboard_generate returned.');
      const limits = deps.config.tools.dashboards;
      const name = title(args, false);
      const spec = specArg(args, false);
      const records: ChartRecords | undefined = chartRecords(args, spec, limits);
      if (name === undefined && spec === undefined && records === undefined) throw new ToolFailure('Give at least one of title, data, csv or spec to change.');
      for (let attempt = 1; ; attempt++) {
        const current = await deps.store.dashboards.getInOrg(ctx.orgId, id);
        if (!current) throw new ToolFailure(`No dashboard with id ${JSON.stringify(id)} in this organization.`);
        const nextSpec = spec ? withoutData(spec) : current.spec;
        const check = await checkChart(nextSpec, records ?? current.data);
        const patch = { ...(name !== undefined ? { title: name } : {}), ...(spec ? { spec: nextSpec } : {}), ...(records ? { data: records } : {}) };
        const updated = await deps.store.dashboards.update(ctx.orgId, id, patch, current.version, deps.now().toISOString());
        if (updated) return { output: await describe(deps, ctx, updated, check) };
        // Another update came first: check the chart again on top of it.
        if (attempt >= UPDATE_ATTEMPTS) throw new ToolFailure('The dashboard kept changing while this update was being made; try again.');
      }
    },
  };
}

export const dashboardTools: HostedToolFactory = (deps) => ({ tools: [generateTool(deps), updateTool(deps)] });
