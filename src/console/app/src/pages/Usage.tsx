import { useState, type FormEvent } from 'react';
import { api, must, type Ok } from '../api';
import { BarChart, ErrorBox, Loading, Page, count, isoFromLocal, money, useLoad, when } from '../ui';

type UsageRow = Ok<'/v1/usage', 'get'>['items'][number];
type Dimension = 'day' | 'model' | 'user' | 'key';
type Metric = 'cost' | 'tokens' | 'requests';

const DIMENSIONS: { by: Dimension; title: string }[] = [
  { by: 'day', title: 'By day' },
  { by: 'model', title: 'By model' },
  { by: 'user', title: 'By user' },
  { by: 'key', title: 'By key' },
];

function value(row: UsageRow, metric: Metric): number {
  if (metric === 'cost') return row.cost;
  if (metric === 'requests') return row.requests;
  return row.promptTokens + row.completionTokens;
}

function label(row: UsageRow, by: Dimension): string {
  const name = by === 'day' ? row.day : by === 'model' ? row.model : by === 'user' ? row.userId : row.keyId;
  return name ?? '(none)';
}

function Chart({ by, title, metric, range }: { by: Dimension; title: string; metric: Metric; range: { since?: string; until?: string } }) {
  const usage = useLoad(() => must(api.GET('/v1/usage', { params: { query: { groupBy: by, ...range } } })), [by, range.since, range.until]);
  const rows = (usage.data?.items ?? []).map((row) => ({ label: label(row, by), value: value(row, metric) }));
  if (by !== 'day') rows.sort((a, b) => b.value - a.value);
  const format = metric === 'cost' ? money : count;
  return (
    <div className="chart-card card">
      <ErrorBox error={usage.error} />
      <Loading loading={usage.loading} />
      {usage.data && <BarChart title={`${title} (${metric === 'cost' ? 'cost, USD' : metric})`} rows={rows.slice(0, 40)} format={format} />}
    </div>
  );
}

function Totals({ range }: { range: { since?: string; until?: string } }) {
  const usage = useLoad(() => must(api.GET('/v1/usage', { params: { query: { groupBy: 'month', ...range } } })), [range.since, range.until]);
  const items = usage.data?.items ?? [];
  const sum = (pick: (r: UsageRow) => number) => items.reduce((total, row) => total + pick(row), 0);
  return (
    <>
      <ErrorBox error={usage.error} />
      {usage.data && (
        <dl className="facts totals" aria-label="Totals">
          <dt>Period</dt>
          <dd>
            {when(usage.data.since)} – {when(usage.data.until)}
          </dd>
          <dt>Requests</dt>
          <dd>{count(sum((r) => r.requests))}</dd>
          <dt>Prompt tokens</dt>
          <dd>
            {count(sum((r) => r.promptTokens))} ({count(sum((r) => r.cachedPromptTokens))} cached)
          </dd>
          <dt>Completion tokens</dt>
          <dd>{count(sum((r) => r.completionTokens))}</dd>
          <dt>Cost</dt>
          <dd>{money(sum((r) => r.cost))}</dd>
        </dl>
      )}
    </>
  );
}

function Budgets() {
  const budgets = useLoad(() => must(api.GET('/v1/usage/budgets')), []);
  return (
    <>
      <h2>Budgets</h2>
      <ErrorBox error={budgets.error} />
      {budgets.data && (
        <table aria-label="Budgets">
          <thead>
            <tr>
              <th scope="col">Applies to</th>
              <th scope="col">Limit</th>
              <th scope="col">Used</th>
              <th scope="col">Resets</th>
            </tr>
          </thead>
          <tbody>
            {budgets.data.items.length === 0 && (
              <tr>
                <td colSpan={4} className="muted">
                  No budget applies to you.
                </td>
              </tr>
            )}
            {budgets.data.items.map((budget) => {
              const format = budget.metric === 'cost' ? money : count;
              return (
                <tr key={`${budget.scope}-${budget.id}-${budget.metric}-${budget.period}`} className={budget.ratio >= 0.8 ? 'warn' : undefined}>
                  <th scope="row">
                    {budget.scope} {budget.id}
                  </th>
                  <td>
                    {format(budget.limit)} {budget.metric === 'tokens' ? 'tokens' : ''} per {budget.period}
                  </td>
                  <td>
                    <meter min={0} max={1} value={Math.min(1, budget.ratio)} aria-label={`Used of ${budget.scope} ${budget.id} budget`} /> {format(budget.used)}{' '}
                    ({Math.round(budget.ratio * 100)}%)
                  </td>
                  <td>{when(budget.resetsAt)}</td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
    </>
  );
}

export function UsagePage() {
  const [draft, setDraft] = useState({ since: '', until: '' });
  const [range, setRange] = useState<{ since?: string; until?: string }>({});
  const [metric, setMetric] = useState<Metric>('cost');
  const apply = (event: FormEvent) => {
    event.preventDefault();
    const since = isoFromLocal(draft.since);
    const until = isoFromLocal(draft.until);
    setRange({ ...(since ? { since } : {}), ...(until ? { until } : {}) });
  };
  return (
    <Page title="Usage and cost">
      <form onSubmit={apply} className="filters" aria-label="Usage period">
        <label>
          From
          <input type="datetime-local" value={draft.since} onChange={(e) => setDraft({ ...draft, since: e.target.value })} />
        </label>
        <label>
          Until
          <input type="datetime-local" value={draft.until} onChange={(e) => setDraft({ ...draft, until: e.target.value })} />
        </label>
        <button type="submit">Apply</button>
        <label>
          Show
          <select value={metric} onChange={(e) => setMetric(e.target.value === 'tokens' ? 'tokens' : e.target.value === 'requests' ? 'requests' : 'cost')}>
            <option value="cost">Cost</option>
            <option value="tokens">Tokens</option>
            <option value="requests">Requests</option>
          </select>
        </label>
      </form>
      <p className="muted">The last 30 days unless a period is chosen. Members see their own usage; admins the organization's.</p>
      <Totals range={range} />
      <div className="charts">
        {DIMENSIONS.map((d) => (
          <Chart key={d.by} by={d.by} title={d.title} metric={metric} range={range} />
        ))}
      </div>
      <Budgets />
    </Page>
  );
}
