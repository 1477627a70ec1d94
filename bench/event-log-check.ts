// After the `store: true` points: is the event log really in the store? One response the load generator
// saw is read back through the gateway (GET /v1/responses/{id}, then ?stream=true, which replays the
// stored log). A response whose log is missing replays as its output items and final event without a
// delta (spec, "Resume window"), so the delta count tells a stored log from a rebuilt one. The log and
// the final state are written after the caller's last byte, off the hot path: the check waits (up to
// settleMs) for the response to leave in_progress, and says how long that took.

export interface StoredEventLog {
  /** The stored response's status. */
  status: string;
  /** Events replayed, and how many of them were text deltas. */
  events: number;
  deltas: number;
  /** The last replayed event's type. */
  last: string;
  /** How long the response was still in_progress after the check began (ms). */
  waitedMs: number;
}

export async function readStoredEventLog(gatewayUrl: string, key: string, responseId: string, settleMs = 10_000): Promise<StoredEventLog> {
  const headers = { authorization: `Bearer ${key}` };
  const url = `${gatewayUrl}/v1/responses/${encodeURIComponent(responseId)}`;
  const started = Date.now();
  let status = 'in_progress';
  for (;;) {
    const record = await fetch(url, { headers });
    if (record.status !== 200) throw new Error(`GET /v1/responses/${responseId} answered ${record.status}`);
    status = ((await record.json()) as { status: string }).status;
    if (status !== 'in_progress' || Date.now() - started >= settleMs) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const waitedMs = Date.now() - started;
  const replay = await fetch(`${url}?stream=true`, { headers });
  if (replay.status !== 200) throw new Error(`GET /v1/responses/${responseId}?stream=true answered ${replay.status}`);
  const types = (await replay.text())
    .split('\n\n')
    .map((frame) => /^event: (.+)$/m.exec(frame)?.[1])
    .filter((type): type is string => type !== undefined);
  return {
    status,
    events: types.length,
    deltas: types.filter((type) => type === 'response.output_text.delta').length,
    last: types.at(-1) ?? '',
    waitedMs,
  };
}
