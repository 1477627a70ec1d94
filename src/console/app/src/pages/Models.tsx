import { api, must } from '../api';
import { ErrorBox, Loading, Page, count, useLoad } from '../ui';

function price(value: number | null | undefined): string {
  return value === null || value === undefined ? '—' : `$${value}`;
}

export function ModelsPage() {
  const models = useLoad(() => must(api.GET('/v1/models')), []);
  return (
    <Page title="Models">
      <p className="muted">The models your organization (and, signed in with a restricted key, that key) may call. Prices in USD per million tokens.</p>
      <Loading loading={models.loading} />
      <ErrorBox error={models.error} />
      {models.data && (
        <table>
          <thead>
            <tr>
              <th scope="col">Model</th>
              <th scope="col">Context window</th>
              <th scope="col">Input</th>
              <th scope="col">Cached input</th>
              <th scope="col">Output</th>
            </tr>
          </thead>
          <tbody>
            {models.data.data.map((model) => (
              <tr key={model.id}>
                <th scope="row">
                  <code>{model.id}</code>
                </th>
                <td>{model.context_window === null ? '—' : `${count(model.context_window)} tokens`}</td>
                <td>{price(model.pricing?.input)}</td>
                <td>{price(model.pricing?.cached_input)}</td>
                <td>{price(model.pricing?.output)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </Page>
  );
}
