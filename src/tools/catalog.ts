// The hosted tool folders of this gateway, in catalog order (what `svc_tools` expands to, less what an
// organization switched off). A folder under src/tools/hosted/ exports one HostedToolFactory.
import type { HostedToolFactory } from './types';
import { dashboardTools } from './hosted/dashboards';
import { workspaceFileTools } from './hosted/files';
import { knowledgeStoreTools } from './hosted/knowledge';

export const HOSTED_TOOL_FACTORIES: readonly HostedToolFactory[] = [workspaceFileTools, dashboardTools, knowledgeStoreTools];
