// Async iterables in tests: a stream of given items (a part source for a format's renderer, or an
// already collected stream folded again) and everything a stream yields, collected.

/** Yields `items`, one by one. */
export async function* streamOf<T>(items: Iterable<T>): AsyncIterable<T> {
  yield* items;
}

/** Everything `source` yields, in order. */
export async function collect<T>(source: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of source) out.push(item);
  return out;
}
