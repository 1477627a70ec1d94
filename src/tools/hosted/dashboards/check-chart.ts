// Server-side check of a dashboard's chart before it is stored: the Vega-Lite spec (data filled in) is
// compiled with the vega-lite package, then the Vega spec it compiles to is run and drawn headless
// (vega, renderer "none", SVG): a spec that does not compile, or whose dataflow or drawing fails (a
// bad expression, an unknown field in a transform), is a ToolFailure carrying the library's own
// message, so the model can correct it. Warnings of both are returned for the model to see.
//
// External data is never loaded: the loader given to Vega refuses every URL (the chart draws the data
// of the tool call only; the page's Content-Security-Policy does the same in browsers).
import { ToolFailure } from '../../types';
import { missingFieldWarnings, unknownMarkHint } from './spec-hints';

const MAX_WARNINGS = 10;

export interface ChartCheck {
  /** Distinct warnings of the compiler and the runtime, at most MAX_WARNINGS. */
  warnings: string[];
  /** Mark items drawn (bars, points, line segments…), axes and legends not counted. */
  marks: number;
}

/** A vega-util logger that keeps warnings and errors (its interface, without the package's types). */
function collectingLogger(into: string[]) {
  let level = 2;
  const keep = (args: unknown[]): void => {
    const text = args.map((a) => (a instanceof Error ? a.message : typeof a === 'string' ? a : JSON.stringify(a))).join(' ');
    if (!into.includes(text) && into.length < MAX_WARNINGS) into.push(text);
  };
  const logger = {
    level(value?: number) {
      if (value === undefined) return level;
      level = value;
      return logger;
    },
    error(...args: unknown[]) {
      keep(args);
      return logger;
    },
    warn(...args: unknown[]) {
      keep(args);
      return logger;
    },
    info() {
      return logger;
    },
    debug() {
      return logger;
    },
  };
  return logger;
}

const refuse = (): Promise<never> =>
  Promise.reject(new Error('external data is not loaded: a dashboard draws only the data given with the tool call (data or csv)'));
const REFUSING_LOADER = { load: refuse, sanitize: refuse, http: refuse, file: refuse };

interface SceneNode {
  marktype?: string;
  role?: string;
  items?: SceneNode[];
}

/** Items of the chart's own marks in a Vega scenegraph (groups are walked, axes/legends/titles skipped). */
function countMarks(node: SceneNode | undefined): number {
  if (!node) return 0;
  if (node.marktype === 'group') {
    let n = 0;
    for (const group of node.items ?? []) for (const child of group.items ?? []) n += countMarks(child);
    return n;
  }
  return node.role === 'mark' ? (node.items?.length ?? 0) : 0;
}

const message = (err: unknown): string => (err instanceof Error ? err.message : String(err));

/** Refuses data given by URL anywhere in the spec (`data: {url}`, a lookup's `from.data.url`). */
function refuseDataUrls(value: unknown, path: string): void {
  if (Array.isArray(value)) {
    value.forEach((item, i) => refuseDataUrls(item, `${path}[${i}]`));
    return;
  }
  if (value === null || typeof value !== 'object') return;
  for (const [key, child] of Object.entries(value)) {
    if (key === 'data' && child !== null && typeof child === 'object' && 'url' in child) {
      throw new ToolFailure(`${path}.data.url: dashboards draw only the data given with the call; pass the records as data (or csv) instead of a URL.`);
    }
    refuseDataUrls(child, `${path}.${key}`);
  }
}

/** Compiles and draws `spec` with `records` as its data; throws ToolFailure when it cannot be drawn. */
export async function checkChart(spec: Record<string, unknown>, records: readonly Record<string, unknown>[]): Promise<ChartCheck> {
  refuseDataUrls(spec, 'spec');
  // ESM-only packages, loaded on first use (a gateway that draws no chart never loads them).
  const [vegaLite, vega] = await Promise.all([import('vega-lite'), import('vega')]);
  const warnings: string[] = [];
  // Copies: Vega tags the data objects it ingests (a symbol id on each), and compiling reuses the spec's objects.
  const full = structuredClone({ ...spec, data: { values: records } }) as Parameters<typeof vegaLite.compile>[0];
  let compiled: ReturnType<typeof vegaLite.compile>;
  try {
    compiled = vegaLite.compile(full, { logger: collectingLogger(warnings) });
  } catch (err) {
    const hint = unknownMarkHint(spec);
    throw new ToolFailure(`The Vega-Lite spec does not compile: ${message(err)}${hint ? ` (${hint})` : ''}`);
  }
  for (const warning of missingFieldWarnings(spec, records)) if (warnings.length < MAX_WARNINGS) warnings.push(warning);
  let view: InstanceType<typeof vega.View> | null = null;
  try {
    view = new vega.View(vega.parse(compiled.spec), { renderer: 'none', loader: REFUSING_LOADER, logger: collectingLogger(warnings), logLevel: vega.Warn });
    // Drawing as SVG runs the whole dataflow and every mark's encoders, as a browser would.
    await view.toSVG();
    const marks = countMarks((view.scenegraph() as unknown as { root?: SceneNode }).root);
    return { warnings, marks };
  } catch (err) {
    if (err instanceof ToolFailure) throw err;
    throw new ToolFailure(`The chart does not render: ${message(err)}`);
  } finally {
    view?.finalize();
  }
}
