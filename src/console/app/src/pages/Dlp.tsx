import { api, must } from '../api';
import { ErrorBox, Loading, Page, useLoad } from '../ui';

export function DlpPage() {
  const policy = useLoad(() => must(api.GET('/v1/admin/dlp')), []);
  const data = policy.data;
  return (
    <Page title="DLP policy">
      <p className="muted">
        What the gateway redacts from your organization's requests before they reach a model. Read-only: the policy is set in the gateway's configuration.
      </p>
      <Loading loading={policy.loading} />
      <ErrorBox error={policy.error} />
      {data && (
        <>
          <dl className="facts">
            <dt>Policy configured</dt>
            <dd>{data.configured ? 'yes' : 'no'}</dd>
            <dt>Enforced</dt>
            <dd>{data.enabled ? 'yes' : 'no'}</dd>
          </dl>
          <h2>Detectors</h2>
          <ul aria-label="Detectors">
            {data.detectors.map((detector) => (
              <li key={detector}>
                <code>{detector}</code>
              </li>
            ))}
            {data.detectors.length === 0 && <li className="muted">None.</li>}
          </ul>
          <h2>Custom patterns</h2>
          <table aria-label="Custom patterns">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Pattern</th>
              </tr>
            </thead>
            <tbody>
              {data.custom.map((rule) => (
                <tr key={rule.name}>
                  <th scope="row">{rule.name}</th>
                  <td>
                    <code>{rule.pattern}</code>
                  </td>
                </tr>
              ))}
              {data.custom.length === 0 && (
                <tr>
                  <td colSpan={2} className="muted">
                    None.
                  </td>
                </tr>
              )}
            </tbody>
          </table>
        </>
      )}
    </Page>
  );
}
