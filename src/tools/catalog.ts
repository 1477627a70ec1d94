// The hosted tool folders of this gateway, in catalog order (what `svc_tools` expands to, less what an
// organization switched off). A folder under src/tools/hosted/ exports one HostedToolFactory.
import type { HostedToolFactory } from './types';
import { browserTools } from './hosted/browser';
import { dashboardTools } from './hosted/dashboards';
import { fileShareTools } from './hosted/file-share';
import { workspaceFileTools } from './hosted/files';
import { knowledgeStoreTools } from './hosted/knowledge';
import { shellTools } from './hosted/shell';
import { storedFileTools } from './hosted/stored-files';
import { vpnTools } from './hosted/vpn';
import { webDownloadTool } from './hosted/web-download';
import { webSearchTool } from './hosted/web-search';

export const HOSTED_TOOL_FACTORIES: readonly HostedToolFactory[] = [
  shellTools,
  workspaceFileTools,
  storedFileTools,
  fileShareTools,
  webSearchTool,
  webDownloadTool,
  vpnTools,
  browserTools,
  dashboardTools,
  knowledgeStoreTools,
];
