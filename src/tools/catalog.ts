// The hosted tool folders of this gateway, in catalog order (what `svc_tools` expands to, less what an
// organization switched off). A folder under src/tools/hosted/ exports one HostedToolFactory.
import type { HostedToolFactory } from './types';
import { browserTools } from './hosted/browser';
import { workspaceFileTools } from './hosted/files';

export const HOSTED_TOOL_FACTORIES: readonly HostedToolFactory[] = [workspaceFileTools, browserTools];
