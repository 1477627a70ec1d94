// The request bodies the load generator sends: the same bytes to the upstream called directly, to the
// floor and to the gateway. Each carries `metadata`, so the gateway's stripFields plugin (chat) or the
// Responses route (spec rule 1: stored and echoed, never forwarded) re-serialises what goes upstream.

/** POST /v1/chat/completions. */
export function chatRequest(model: string, stream: boolean): string {
  return JSON.stringify({
    model,
    messages: [
      { role: 'system', content: 'You are a helpful assistant.' },
      { role: 'user', content: 'Write one sentence about foxes.' },
    ],
    temperature: 0.2,
    metadata: { team: 'bench' },
    ...(stream ? { stream: true } : {}),
  });
}

/** POST /v1/responses, the same conversation as chatRequest; `store` says whether it is kept. */
export function responsesRequest(model: string, options: { stream: boolean; store: boolean }): string {
  return JSON.stringify({
    model,
    instructions: 'You are a helpful assistant.',
    input: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Write one sentence about foxes.' }] }],
    temperature: 0.2,
    metadata: { team: 'bench' },
    store: options.store,
    ...(options.stream ? { stream: true } : {}),
  });
}

/** Text every successful Responses reply contains: a stream's final event, a response object's status. */
export const RESPONSES_DONE = { stream: 'event: response.completed', json: '"status":"completed"' } as const;
