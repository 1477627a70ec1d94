// The plugin registry: one line per plugin, listed explicitly (no filesystem scanning).
// Execution order comes from each definition's phase and order, not from this list.
import type { PluginDefinition } from '../src/pipeline/plugin';
import audit from './audit';
import auth from './auth';
import budgets from './budgets';
import dlp from './dlp';
import rateLimit from './rateLimit';
import stripFields from './stripFields';

export const plugins: readonly PluginDefinition[] = [auth, rateLimit, budgets, dlp, stripFields, audit];
