import { api, must } from '../api';
import { FilterBar, KeysetTable, useFilterForm, useKeysetList } from '../lists';
import { Page, isoFromLocal, when } from '../ui';

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

// The filters are typed by the document; a status like "4xx" is a string the operation accepts.
const fetchAudit = (filters: Filters, after?: string) => must(api.GET('/v1/admin/audit', { params: { query: query(filters, after) as never } }));

export function AuditPage() {
  const form = useFilterForm(EMPTY);
  const list = useKeysetList(fetchAudit, form.filters);
  return (
    <Page title="Audit">
      <FilterBar label="Filter audit records" onApply={form.apply}>
        {FIELDS.map((field) => (
          <label key={field.name}>
            {field.label}
            <input
              type={field.type ?? 'text'}
              value={form.draft[field.name]}
              placeholder={field.placeholder}
              maxLength={200}
              onChange={(e) => form.set(field.name, e.target.value)}
            />
          </label>
        ))}
      </FilterBar>
      <KeysetTable
        label="Audit records"
        columns={['Time', 'User', 'Key', 'Operation', 'Status', 'Model', 'Tokens', 'Latency']}
        empty="No audit records match."
        list={list}
        row={(record) => (
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
        )}
      />
    </Page>
  );
}
