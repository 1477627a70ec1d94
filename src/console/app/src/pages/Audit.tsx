import { useEffect, useState, type FormEvent } from 'react';
import { api, must, type Ok } from '../api';
import { ErrorBox, Loading, Page, isoFromLocal, when } from '../ui';

type AuditItem = Ok<'/v1/admin/audit', 'get'>['items'][number];

interface Filters {
  userId: string;
  keyId: string;
  model: string;
  operationId: string;
  status: string;
  since: string;
  until: string;
}

const EMPTY: Filters = { userId: '', keyId: '', model: '', operationId: '', status: '', since: '', until: '' };

function query(filters: Filters, after?: string) {
  const since = isoFromLocal(filters.since);
  const until = isoFromLocal(filters.until);
  const text = (name: 'userId' | 'keyId' | 'model' | 'operationId' | 'status') => (filters[name].trim() ? { [name]: filters[name].trim() } : {});
  return {
    order: 'desc' as const,
    limit: 50,
    ...text('userId'),
    ...text('keyId'),
    ...text('model'),
    ...text('operationId'),
    ...text('status'),
    ...(since ? { since } : {}),
    ...(until ? { until } : {}),
    ...(after ? { after } : {}),
  };
}

const FIELDS: { name: keyof Filters; label: string; type?: string; placeholder?: string }[] = [
  { name: 'userId', label: 'User id' },
  { name: 'keyId', label: 'Key id' },
  { name: 'model', label: 'Model' },
  { name: 'operationId', label: 'Operation', placeholder: 'e.g. createChatCompletion' },
  { name: 'status', label: 'Status', placeholder: '200, 4xx, 5xx' },
  { name: 'since', label: 'From', type: 'datetime-local' },
  { name: 'until', label: 'Until', type: 'datetime-local' },
];

export function AuditPage() {
  const [draft, setDraft] = useState<Filters>(EMPTY);
  const [filters, setFilters] = useState<Filters>(EMPTY);
  const [items, setItems] = useState<AuditItem[]>([]);
  const [cursor, setCursor] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [loading, setLoading] = useState(true);

  const load = async (current: Filters, after?: string) => {
    setLoading(true);
    setError(null);
    try {
      // The filters are typed by the document; a status like "4xx" is a string the operation accepts.
      const page = await must(api.GET('/v1/admin/audit', { params: { query: query(current, after) as never } }));
      setItems((existing) => (after ? [...existing, ...page.items] : page.items));
      setCursor(page.nextCursor);
    } catch (err) {
      setError(err);
      if (!after) setItems([]);
    } finally {
      setLoading(false);
    }
  };

  useEffect(() => {
    void load(filters);
  }, [filters]);

  const apply = (event: FormEvent) => {
    event.preventDefault();
    setFilters({ ...draft });
  };

  return (
    <Page title="Audit">
      <form onSubmit={apply} className="filters" aria-label="Filter audit records">
        {FIELDS.map((field) => (
          <label key={field.name}>
            {field.label}
            <input
              type={field.type ?? 'text'}
              value={draft[field.name]}
              placeholder={field.placeholder}
              maxLength={200}
              onChange={(e) => setDraft({ ...draft, [field.name]: e.target.value })}
            />
          </label>
        ))}
        <button type="submit">Apply filters</button>
      </form>
      <ErrorBox error={error} />
      <table aria-label="Audit records">
        <thead>
          <tr>
            <th scope="col">Time</th>
            <th scope="col">User</th>
            <th scope="col">Key</th>
            <th scope="col">Operation</th>
            <th scope="col">Status</th>
            <th scope="col">Model</th>
            <th scope="col">Tokens</th>
            <th scope="col">Latency</th>
          </tr>
        </thead>
        <tbody>
          {!loading && items.length === 0 && (
            <tr>
              <td colSpan={8} className="muted">
                No audit records match.
              </td>
            </tr>
          )}
          {items.map((record) => (
            <tr key={record.id}>
              <td>{when(record.at)}</td>
              <td>{record.userId ?? '—'}</td>
              <td>
                <code>{record.keyId ?? '—'}</code>
              </td>
              <th scope="row">
                {record.operationId ?? record.route}
                <div className="muted small">
                  {record.method} {record.route}
                </div>
              </th>
              <td>{record.status}</td>
              <td>{record.model ?? '—'}</td>
              <td>{record.promptTokens !== undefined ? `${record.promptTokens} / ${record.completionTokens ?? 0}` : '—'}</td>
              <td>{record.latencyMs} ms</td>
            </tr>
          ))}
        </tbody>
      </table>
      <Loading loading={loading} />
      {cursor && !loading && (
        <button type="button" onClick={() => void load(filters, cursor)}>
          More
        </button>
      )}
    </Page>
  );
}
