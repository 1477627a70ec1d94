import { api, must, type Ok } from '../api';
import { KeysetTable, useKeysetList } from '../lists';
import { Link } from '../router';
import { ErrorBox, Loading, Page, useLoad, when } from '../ui';
import { Items, StatusBadge } from './Runs';

// The list takes no filters: one constant, so the first page is read once.
const NO_FILTERS = {};
const fetchResponses = (_: object, after?: string) => must(api.GET('/v1/responses', { params: { query: { limit: 20, ...(after ? { after } : {}) } } }));

export function ConversationsPage() {
  const list = useKeysetList(fetchResponses, NO_FILTERS);
  return (
    <Page title="Conversations">
      <p className="muted">Stored Responses (store: true) you may see, newest first. Open one to replay its input and output.</p>
      <KeysetTable
        label="Stored responses"
        columns={['Response', 'Created', 'Model', 'Status', 'Conversation', 'User']}
        empty="No stored responses."
        list={list}
        row={(item) => (
          <tr key={item.id}>
            <th scope="row">
              <Link to={`/conversations/${item.id}`}>
                <code>{item.id}</code>
              </Link>
            </th>
            <td>{when(item.createdAt)}</td>
            <td>{item.model}</td>
            <td>
              <StatusBadge status={item.status} />
            </td>
            <td>{item.conversationId ?? (item.previousResponseId ? `after ${item.previousResponseId}` : '—')}</td>
            <td>{item.userId ?? '—'}</td>
          </tr>
        )}
      />
    </Page>
  );
}

export function ConversationPage({ responseId }: { responseId: string }) {
  // Without ?stream=true the answer is the JSON Response (the document also lists the event stream).
  const response = useLoad(
    () => must(api.GET('/v1/responses/{response_id}', { params: { path: { response_id: responseId } } })) as Promise<Ok<'/v1/responses/{response_id}', 'get'>>,
    [responseId],
  );
  const input = useLoad(() => must(api.GET('/v1/responses/{response_id}/input_items', { params: { path: { response_id: responseId } } })), [responseId]);
  const detail = response.data;
  return (
    <Page title={`Response ${responseId}`}>
      <Loading loading={response.loading} />
      <ErrorBox error={response.error} />
      {detail && (
        <dl className="facts">
          <dt>Model</dt>
          <dd>{detail.model}</dd>
          <dt>Status</dt>
          <dd>
            <StatusBadge status={detail.status} />
          </dd>
          <dt>Created</dt>
          <dd>{when(new Date(detail.created_at * 1000).toISOString())}</dd>
          <dt>Previous response</dt>
          <dd>{detail.previous_response_id ? <Link to={`/conversations/${detail.previous_response_id}`}>{detail.previous_response_id}</Link> : '—'}</dd>
          <dt>Tokens</dt>
          <dd>{detail.usage ? `${detail.usage.input_tokens} in, ${detail.usage.output_tokens} out` : '—'}</dd>
        </dl>
      )}
      <h2>Input</h2>
      <ErrorBox error={input.error} />
      {input.data && <Items items={input.data.data as unknown as Record<string, unknown>[]} label="Input items" />}
      <h2>Output</h2>
      {detail && <Items items={detail.output as unknown as Record<string, unknown>[]} label="Output items" />}
      {detail?.error && (
        <p role="alert" className="error">
          {detail.error.code}: {detail.error.message}
        </p>
      )}
    </Page>
  );
}
