// Background work that lives beside the HTTP server (serve) or alone (worker): run queues, trigger
// schedulers, retention sweeps. Each piece returns a closer, called on shutdown in reverse order.
import type { AppServices } from './services';

export type Closer = () => Promise<void>;

export interface Runtime {
  close(): Promise<void>;
}

function runtimeOf(closers: Closer[]): Runtime {
  return {
    async close() {
      for (const close of [...closers].reverse()) await close();
    },
  };
}

/** Started by `serve` after the app is built. */
export async function startServeRuntime(_services: AppServices): Promise<Runtime> {
  const closers: Closer[] = [];
  return runtimeOf(closers);
}

/** Started by `worker` (no HTTP). */
export async function startWorkerRuntime(_services: AppServices): Promise<Runtime> {
  const closers: Closer[] = [];
  return runtimeOf(closers);
}
