// A provider built on a fake upstream for the length of a describe(): before() starts the fake and
// builds the provider on it, after() closes both. The fixtures of each upstream
// (test/fixtures/upstreams/*-upstream.ts) name their own.

interface Closable {
  close(): Promise<void>;
}

/** The fake upstream and the provider on it; set by the before() hook, so read them inside tests only. */
export interface ProviderOnFake<Fake, P> {
  readonly fake: Fake;
  readonly provider: P;
}

/** Registers the before/after hooks in the calling describe(). */
export function useProviderOnFake<Fake extends Closable, P extends Closable>(start: () => Promise<Fake>, build: (fake: Fake) => P): ProviderOnFake<Fake, P> {
  let fake: Fake | undefined;
  let provider: P | undefined;
  before(async () => {
    fake = await start();
    provider = build(fake);
  });
  after(async () => {
    await provider?.close();
    await fake?.close();
  });
  const ready = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('useProviderOnFake: read before its before() hook ran');
    return value;
  };
  return {
    get fake() {
      return ready(fake);
    },
    get provider() {
      return ready(provider);
    },
  };
}
