import { useState, type FormEvent } from 'react';
import { api, must } from '../api';
import { Link, navigate } from '../router';
import { ErrorBox, Loading, Page, useLoad, when } from '../ui';

export function AgentsPage() {
  const agents = useLoad(() => must(api.GET('/v1/agents/list')), []);
  return (
    <Page title="Agents">
      <Loading loading={agents.loading} />
      <ErrorBox error={agents.error} />
      {agents.data && (
        <table aria-label="Agents">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Description</th>
              <th scope="col">Created by</th>
              <th scope="col">Created</th>
              <th scope="col">Your permissions</th>
            </tr>
          </thead>
          <tbody>
            {agents.data.items.length === 0 && (
              <tr>
                <td colSpan={5} className="muted">
                  No agents are visible to you.
                </td>
              </tr>
            )}
            {agents.data.items.map((agent) => (
              <tr key={agent.agentId}>
                <th scope="row">
                  <Link to={`/agents/${agent.agentId}`}>{agent.name}</Link>
                </th>
                <td>{agent.description}</td>
                <td>{agent.creatorName}</td>
                <td>{when(agent.createdAt)}</td>
                <td>{agent.metadata.userPermissions?.join(', ') ?? '—'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </Page>
  );
}

function Webhooks({ agentId }: { agentId: string }) {
  const [shown, setShown] = useState(false);
  const hooks = useLoad(
    () => (shown ? must(api.GET('/v1/agents/{agentId}/webhooks', { params: { path: { agentId } } })) : Promise.resolve(null)),
    [shown, agentId],
  );
  if (!shown) {
    return (
      <button type="button" onClick={() => setShown(true)}>
        Show webhook URLs
      </button>
    );
  }
  return (
    <>
      <ErrorBox error={hooks.error} />
      {hooks.data && (
        <ul aria-label="Webhook URLs">
          {hooks.data.items.map((hook) => (
            <li key={hook.triggerIndex}>
              Trigger {hook.triggerIndex + 1}: <code className="mono">{hook.url}</code>
            </li>
          ))}
          {hooks.data.items.length === 0 && <li className="muted">No webhook trigger (the agent's triggers are scheduled or event-driven).</li>}
        </ul>
      )}
    </>
  );
}

export function AgentPage({ agentId }: { agentId: string }) {
  const agent = useLoad(() => must(api.GET('/v1/agents/{agentId}', { params: { path: { agentId } } })), [agentId]);
  const [values, setValues] = useState<Record<string, string>>({});
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);

  const start = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const inputs = Object.entries(values)
        .filter(([, value]) => value !== '')
        .map(([name, value]) => ({ name, value }));
      const accepted = await must(api.POST('/v1/agents/runs', { body: { agentId, inputs } }));
      navigate(`/runs/${accepted.runId}`);
    } catch (err) {
      setError(err);
      setBusy(false);
    }
  };

  const detail = agent.data;
  const canEdit = detail?.metadata.userPermissions?.includes('edit') ?? false;
  return (
    <Page title={detail ? `Agent: ${detail.name}` : 'Agent'}>
      <Loading loading={agent.loading} />
      <ErrorBox error={agent.error} />
      {detail && (
        <>
          <p>{detail.description}</p>
          <dl className="facts">
            <dt>Models</dt>
            <dd>{detail.modelsInUse.join(', ') || '—'}</dd>
            <dt>Triggers</dt>
            <dd>{detail.hasTriggers ? 'Configured (scheduled, event or webhook)' : 'None: runs start from the API or this page'}</dd>
            <dt>Last run</dt>
            <dd>{when(detail.lastRunAtUtc)}</dd>
          </dl>
          {detail.hasTriggers && canEdit && <Webhooks agentId={agentId} />}
          <form onSubmit={start} className="card form-grid" aria-label="Run this agent">
            <h2>Run this agent</h2>
            {detail.inputs.length === 0 && <p className="muted">This agent takes no inputs.</p>}
            {detail.inputs.map((label) => (
              <div key={label} className="field">
                <label htmlFor={`input-${label}`}>{label}</label>
                <textarea
                  id={`input-${label}`}
                  rows={2}
                  maxLength={100_000}
                  value={values[label] ?? ''}
                  onChange={(e) => setValues((current) => ({ ...current, [label]: e.target.value }))}
                />
              </div>
            ))}
            <div>
              <button type="submit" disabled={busy}>
                Start run
              </button>
            </div>
            <ErrorBox error={error} />
          </form>
          <h2>Recent runs</h2>
          <ul>
            {detail.recentRunIds.map((runId) => (
              <li key={runId}>
                <Link to={`/runs/${runId}`}>{runId}</Link>
              </li>
            ))}
            {detail.recentRunIds.length === 0 && <li className="muted">No runs yet.</li>}
          </ul>
          <p>
            <Link to={`/runs?agentId=${encodeURIComponent(agentId)}`}>All runs of this agent</Link>
          </p>
        </>
      )}
    </Page>
  );
}
