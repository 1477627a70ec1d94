// The records a dashboard draws: given as `data` (an array of objects), as `csv` text (parsed with
// csv-parse: a header row, numbers cast), or inline in the spec (`data.values`). Bounded by
// tools.dashboards.maxDataRows and maxDataBytes.
import { CsvError, parse } from 'csv-parse/sync';
import type { DashboardsConfig } from '../../../config/types';
import { ToolFailure } from '../../types';

export type ChartRecords = Record<string, unknown>[];

const isRecord = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);

/** JSON text of a value, and whether a key or string in it holds a NUL character (no store can keep one). */
export function jsonText(value: unknown): { text: string; nul: boolean } {
  let nul = false;
  const text = JSON.stringify(value, (key: string, item: unknown) => {
    if (key.includes('\0') || (typeof item === 'string' && item.includes('\0'))) nul = true;
    return item;
  });
  return { text, nul };
}

function parseCsv(csv: string, limits: DashboardsConfig): ChartRecords {
  try {
    // One row past the limit is enough to know it is too many.
    return parse(csv, { columns: true, skip_empty_lines: true, trim: true, bom: true, cast: true, to: limits.maxDataRows + 1 }) as ChartRecords;
  } catch (err) {
    if (err instanceof CsvError) throw new ToolFailure(`The CSV does not parse: ${err.message}`);
    throw err;
  }
}

/**
 * The records of a call: `data` or `csv` (not both), else the spec's own `data.values`, else
 * undefined (an update keeps the dashboard's records). Checked: objects only, within the limits, no
 * NUL character (the store cannot keep one).
 */
export function chartRecords(args: Record<string, unknown>, spec: Record<string, unknown> | undefined, limits: DashboardsConfig): ChartRecords | undefined {
  const { data, csv } = args;
  if (data !== undefined && csv !== undefined) throw new ToolFailure('Give the records as data or as csv, not both.');
  let records: unknown;
  if (data !== undefined) records = data;
  else if (csv !== undefined) {
    if (typeof csv !== 'string') throw new ToolFailure('Argument csv must be a string: CSV text with a header row.');
    records = parseCsv(csv, limits);
  } else {
    const inline = isRecord(spec?.['data']) ? spec['data']['values'] : undefined;
    if (inline === undefined) return undefined;
    records = inline;
  }
  if (!Array.isArray(records) || !records.every(isRecord)) throw new ToolFailure('The data must be an array of records (JSON objects), one per row.');
  if (records.length > limits.maxDataRows)
    throw new ToolFailure(`The data has more than ${limits.maxDataRows} rows, the most a dashboard may hold; aggregate it first.`);
  const { text, nul } = jsonText(records);
  const bytes = Buffer.byteLength(text);
  if (bytes > limits.maxDataBytes)
    throw new ToolFailure(`The data is ${bytes} bytes as JSON; a dashboard may hold at most ${limits.maxDataBytes}. Aggregate it first.`);
  if (nul) throw new ToolFailure('The data contains a NUL character, which cannot be stored.');
  return records;
}
