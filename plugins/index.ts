// The plugin registry: one line per plugin, listed explicitly (no filesystem scanning).
// Execution order comes from each definition's phase and order, not from this list.
import type { PluginDefinition } from '../src/pipeline/plugin';

export const plugins: readonly PluginDefinition[] = [];
