// Shared pieces of the pages: loading state, errors, table headers, dates, and the SVG bar chart of the usage page.
import { useCallback, useEffect, useRef, useState, type ReactNode } from 'react';
import { errorText } from './api';

export interface Loaded<T> {
  data: T | undefined;
  error: unknown;
  loading: boolean;
  reload: () => void;
}

/** Runs `load` when `key` changes (and on reload()); a stale answer never overwrites a newer one. */
export function useLoad<T>(load: () => Promise<T>, key: unknown[]): Loaded<T> {
  const [state, setState] = useState<{ data: T | undefined; error: unknown; loading: boolean }>({ data: undefined, error: null, loading: true });
  const [tick, setTick] = useState(0);
  const loader = useRef(load);
  loader.current = load;
  useEffect(() => {
    let live = true;
    setState((s) => ({ ...s, loading: true }));
    loader.current().then(
      (data) => live && setState({ data, error: null, loading: false }),
      (error: unknown) => live && setState({ data: undefined, error, loading: false }),
    );
    return () => {
      live = false;
    };
  }, [...key, tick]);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  return { ...state, reload };
}

export function ErrorBox({ error }: { error: unknown }) {
  if (error === null || error === undefined) return null;
  return (
    <p role="alert" className="error">
      {errorText(error)}
    </p>
  );
}

export function Page({ title, children, actions }: { title: string; children: ReactNode; actions?: ReactNode }) {
  useEffect(() => {
    document.title = `${title} · agent-gateway console`;
  }, [title]);
  return (
    <section className="page" aria-labelledby="page-title">
      <header className="page-header">
        <h1 id="page-title">{title}</h1>
        {actions}
      </header>
      {children}
    </section>
  );
}

/** A table's header row: one column header per name. */
export function TableHead({ columns }: { columns: string[] }) {
  return (
    <thead>
      <tr>
        {columns.map((column) => (
          <th key={column} scope="col">
            {column}
          </th>
        ))}
      </tr>
    </thead>
  );
}

export function Loading({ loading }: { loading: boolean }) {
  return loading ? <p className="muted">Loading…</p> : null;
}

export function when(iso: string | null | undefined): string {
  if (!iso) return '—';
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : date.toLocaleString();
}

/** An <input type="datetime-local"> value as ISO-8601 (undefined when empty). */
export function isoFromLocal(value: string): string | undefined {
  if (value === '') return undefined;
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString();
}

export function money(value: number | null | undefined): string {
  if (value === null || value === undefined) return '—';
  return `$${value < 0.01 && value > 0 ? value.toPrecision(2) : value.toFixed(2)}`;
}

export function count(value: number | null | undefined): string {
  return value === null || value === undefined ? '—' : value.toLocaleString();
}

/** Horizontal bars in plain SVG: one row per label, the value printed at the bar's end. */
export function BarChart({ title, rows, format }: { title: string; rows: { label: string; value: number }[]; format: (v: number) => string }) {
  const max = Math.max(0, ...rows.map((r) => r.value));
  const rowHeight = 22;
  const labelWidth = 170;
  const width = 560;
  const barSpace = width - labelWidth - 90;
  const height = Math.max(rowHeight, rows.length * rowHeight);
  return (
    <figure className="chart">
      <figcaption>{title}</figcaption>
      {rows.length === 0 ? (
        <p className="muted">No usage in this period.</p>
      ) : (
        <svg role="img" aria-label={title} viewBox={`0 0 ${width} ${height}`} width="100%" preserveAspectRatio="xMinYMin meet">
          {rows.map((row, i) => {
            const w = max > 0 ? Math.max(1, (row.value / max) * barSpace) : 1;
            const y = i * rowHeight;
            return (
              <g key={row.label} transform={`translate(0 ${y})`}>
                <title>{`${row.label}: ${format(row.value)}`}</title>
                <text x={labelWidth - 6} y={15} textAnchor="end" className="chart-label">
                  {row.label.length > 24 ? `${row.label.slice(0, 23)}…` : row.label}
                </text>
                <rect x={labelWidth} y={3} width={w} height={rowHeight - 6} rx={2} className="chart-bar" />
                <text x={labelWidth + w + 6} y={15} className="chart-value">
                  {format(row.value)}
                </text>
              </g>
            );
          })}
        </svg>
      )}
    </figure>
  );
}
