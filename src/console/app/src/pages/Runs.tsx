import { useEffect, useState } from 'react';
import { api, must, type Schemas } from '../api';
import { FilterBar, KeysetTable, useFilterForm, useKeysetList } from '../lists';
import { Link, navigate } from '../router';
import { ErrorBox, Loading, Page, TableHead, isoFromLocal, useLoad, when } from '../ui';

type Status = Schemas['RunStatus'];
const STATUSES: Status[] = ['in_progress', 'success', 'failure', 'cancelled'];

interface Filters {
  agentId: string;
  status: Status | '';
  createdAfter: string;
  createdBefore: string;
}

function query(filters: Filters, after?: string) {
  const createdAfter = isoFromLocal(filters.createdAfter);
  const createdBefore = isoFromLocal(filters.createdBefore);
  return {
    limit: 20,
    ...(filters.agentId ? { agentId: filters.agentId } : {}),
    ...(filters.status ? { status: filters.status } : {}),
    ...(createdAfter ? { createdAfter } : {}),
    ...(createdBefore ? { createdBefore } : {}),
    ...(after ? { after } : {}),
  };
}

export function StatusBadge({ status }: { status: string }) {
  return <span className={`badge badge-${status}`}>{status.replace('_', ' ')}</span>;
}

const fetchRuns = (filters: Filters, after?: string) => must(api.GET('/v1/runs', { params: { query: query(filters, after) } }));

export function RunsPage() {
  const agents = useLoad(() => must(api.GET('/v1/agents/list')), []);
  const initialAgent = new URLSearchParams(window.location.search).get('agentId') ?? '';
  const form = useFilterForm<Filters>({ agentId: initialAgent, status: '', createdAfter: '', createdBefore: '' });
  const list = useKeysetList(fetchRuns, form.filters);
  return (
    <Page title="Runs">
      <FilterBar label="Filter runs" onApply={form.apply}>
        <label>
          Agent
          <select value={form.draft.agentId} onChange={(e) => form.set('agentId', e.target.value)}>
            <option value="">All agents</option>
            {agents.data?.items.map((agent) => (
              <option key={agent.agentId} value={agent.agentId}>
                {agent.name}
              </option>
            ))}
          </select>
        </label>
        <label>
          Status
          <select value={form.draft.status} onChange={(e) => form.set('status', STATUSES.find((s) => s === e.target.value) ?? '')}>
            <option value="">Any status</option>
            {STATUSES.map((status) => (
              <option key={status} value={status}>
                {status}
              </option>
            ))}
          </select>
        </label>
        <label>
          Created after
          <input type="datetime-local" value={form.draft.createdAfter} onChange={(e) => form.set('createdAfter', e.target.value)} />
        </label>
        <label>
          Created before
          <input type="datetime-local" value={form.draft.createdBefore} onChange={(e) => form.set('createdBefore', e.target.value)} />
        </label>
      </FilterBar>
      <KeysetTable
        label="Runs"
        columns={['Run', 'Agent', 'Status', 'Created', 'Ended', 'Triggered by']}
        empty="No runs match."
        list={list}
        row={(run) => (
          <tr key={run.runId}>
            <th scope="row">
              <Link to={`/runs/${run.runId}`}>
                <code>{run.runId.slice(0, 8)}</code>
              </Link>
            </th>
            <td>{run.agentName ?? run.agentId ?? '(deleted agent)'}</td>
            <td>
              <StatusBadge status={run.status} />
            </td>
            <td>{when(run.createdAtUtc)}</td>
            <td>{when(run.endedAtUtc)}</td>
            <td>{run.triggeredBy ?? 'trigger'}</td>
          </tr>
        )}
      />
    </Page>
  );
}

/** The final assistant message's text (the run's `result` is a JSON-encoded `{role, parts}`). */
function resultText(result: string | null): string | null {
  if (result === null) return null;
  try {
    const parsed = JSON.parse(result) as { parts?: { type?: string; text?: string }[] };
    const texts = (parsed.parts ?? []).filter((p) => typeof p.text === 'string').map((p) => p.text);
    return texts.length > 0 ? texts.join('\n') : result;
  } catch {
    return result;
  }
}

type ConversationItem = Schemas['ConversationItem'];

/** One stored item as text. (The generated item types carry the schema names as `type`, so fields decide.) */
export function itemText(item: Record<string, unknown>): { who: string; text: string } {
  const content = item['content'];
  if (Array.isArray(content)) {
    const text = content
      .map((part: Record<string, unknown>) =>
        typeof part['text'] === 'string' ? part['text'] : typeof part['refusal'] === 'string' ? `(refused) ${part['refusal']}` : `[${String(part['type'])}]`,
      )
      .join('\n');
    return { who: typeof item['role'] === 'string' ? item['role'] : 'message', text };
  }
  if (typeof item['name'] === 'string' && typeof item['arguments'] === 'string') return { who: `tool call ${item['name']}`, text: item['arguments'] };
  if (typeof item['output'] === 'string') return { who: 'tool output', text: item['output'] };
  if (typeof item['summary'] === 'string') return { who: 'compaction', text: item['summary'] };
  return { who: String(item['type'] ?? 'item'), text: '' };
}

export function Items({ items, label }: { items: Record<string, unknown>[]; label: string }) {
  return (
    <ol className="items" aria-label={label}>
      {items.map((item, i) => {
        const { who, text } = itemText(item);
        return (
          <li key={typeof item['id'] === 'string' ? item['id'] : i} className={`item item-${who.split(' ')[0]}`}>
            <div className="item-who">{who}</div>
            <pre className="item-text">{text}</pre>
          </li>
        );
      })}
    </ol>
  );
}

export function RunPage({ runId }: { runId: string }) {
  const [tick, setTick] = useState(0);
  const run = useLoad(() => must(api.GET('/v1/runs/{runId}', { params: { path: { runId } } })), [runId, tick]);
  const evals = useLoad(() => must(api.GET('/v1/runs/{runId}/evals', { params: { path: { runId } } })), [runId, tick]);
  const conversationId = run.data?.conversationId ?? null;
  const items = useLoad(
    () =>
      conversationId
        ? must(
            api.GET('/v1/conversations/{conversation_id}/items', {
              params: { path: { conversation_id: conversationId }, query: { limit: 100, order: 'asc' } },
            }),
          )
        : Promise.resolve(null),
    [conversationId, tick],
  );
  const [actionError, setActionError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const status = run.data?.status;
  const evalPending = evals.data?.steps.some((s) => s.result === null) ?? false;

  // Live status: re-read every second while the run is in progress (and until its verdicts are in).
  useEffect(() => {
    if (status !== 'in_progress' && !(status !== undefined && evalPending)) return;
    const timer = setTimeout(() => setTick((t) => t + 1), 1000);
    return () => clearTimeout(timer);
  }, [status, evalPending, tick]);

  const act = async (action: 'cancel' | 'restart' | 'retry') => {
    setBusy(true);
    setActionError(null);
    try {
      if (action === 'restart') {
        const accepted = await must(api.POST('/v1/runs/{runId}/restart', { params: { path: { runId } } }));
        navigate(`/runs/${accepted.runId}`);
        return;
      }
      if (action === 'cancel') await must(api.POST('/v1/runs/{runId}/cancel', { params: { path: { runId } } }));
      else await must(api.POST('/v1/runs/{runId}/retry', { params: { path: { runId } } }));
      setTick((t) => t + 1);
    } catch (err) {
      setActionError(err);
    } finally {
      setBusy(false);
    }
  };

  const detail = run.data;
  const text = detail ? resultText(detail.result) : null;
  return (
    <Page title={`Run ${runId.slice(0, 8)}`}>
      {!detail && <Loading loading={run.loading} />}
      {!detail && <ErrorBox error={run.error} />}
      {detail && (
        <>
          <dl className="facts">
            <dt>Status</dt>
            <dd role="status" aria-label="Run status">
              <StatusBadge status={detail.status} />
            </dd>
            <dt>Agent</dt>
            <dd>{detail.agentId ? <Link to={`/agents/${detail.agentId}`}>{detail.agentId}</Link> : '(deleted agent)'}</dd>
            <dt>Created</dt>
            <dd>{when(detail.createdAtUtc)}</dd>
            <dt>Ended</dt>
            <dd>{when(detail.endedAtUtc)}</dd>
            <dt>Run id</dt>
            <dd>
              <code>{detail.runId}</code>
            </dd>
          </dl>
          <div className="row">
            {detail.status === 'in_progress' && (
              <button type="button" className="danger" disabled={busy} onClick={() => void act('cancel')}>
                Cancel run
              </button>
            )}
            {detail.status === 'failure' && (
              <button type="button" disabled={busy} onClick={() => void act('retry')}>
                Re-run failed step
              </button>
            )}
            {detail.status !== 'in_progress' && (
              <button type="button" disabled={busy} onClick={() => void act('restart')}>
                Restart as a new run
              </button>
            )}
          </div>
          <ErrorBox error={actionError} />
          {detail.error && (
            <div role="region" aria-label="Run error" className="card error-card">
              <strong>{detail.error.code}</strong>: {detail.error.message}
            </div>
          )}
          {text !== null && (
            <div role="region" aria-label="Result" className="card">
              <h2>Result</h2>
              <pre className="item-text">{text}</pre>
            </div>
          )}
          <h2>Steps</h2>
          <ErrorBox error={evals.error} />
          {evals.data && (
            <>
              <p>
                Evaluation: <StatusBadge status={evals.data.result} />
              </p>
              <table aria-label="Steps">
                <TableHead columns={['Step', 'Name', 'Verdict', 'Explanation']} />
                <tbody>
                  {evals.data.steps.map((step) => (
                    <tr key={step.stepNumber}>
                      <th scope="row">{step.stepNumber}</th>
                      <td>{step.name ?? '—'}</td>
                      <td>
                        <StatusBadge status={step.result ?? 'pending'} />
                      </td>
                      <td>{step.explanation ?? '—'}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </>
          )}
          <h2>Conversation</h2>
          <ErrorBox error={items.error} />
          {items.data && <Items items={items.data.data as ConversationItem[] as unknown as Record<string, unknown>[]} label="Conversation items" />}
        </>
      )}
    </Page>
  );
}
