// The bubblewrap command line of one svc_shell sandbox: what the command sees and what bounds it.
//
// Seen: the conversation's workspace read-write at /workspace (the cwd and HOME); /usr and the usual
// links to it read-only; a handful of /etc files the C library, TLS and DNS need (no host passwd: a
// two-user one is written in); fresh /proc, /dev, and size-bounded /tmp and /dev/shm; the rest of the
// root read-only. Never the gateway's config, data directory or source tree: nothing else is bound.
// Unshared: user (an unprivileged uid with no capabilities, no nested user namespaces), pid (the
// sandbox ends with its first process), ipc, uts, cgroup, and the network unless the conversation
// has an egress profile (then the proxy variables point at it).
// Bounded per process by rlimits set inside (after the user namespace exists, so RLIMIT_NPROC counts
// this sandbox's processes only): CPU seconds, address space, processes, file size.
import { lstatSync, readlinkSync, type Stats } from 'node:fs';
import path from 'node:path';

/** Descriptors the sandbox is given beyond stdio (sandbox.ts opens them, in this order). */
export const SANDBOX_FDS = {
  /** bwrap reads its options here (NUL-separated), so no host path shows in the sandbox's /proc/1/cmdline. */
  args: 3,
  /** bwrap writes {"child-pid": N} here: the host pid of the sandbox's init, killed to end everything. */
  info: 4,
  passwd: 5,
  group: 6,
  /** The sandbox's first shell writes one byte here once its limits are set: the sandbox started. */
  started: 7,
} as const;

/** The uid and gid the command has inside (mapped to the unprivileged host user bwrap runs as). */
export const SANDBOX_UID = 1000;
export const SANDBOX_GID = 1000;
export const SANDBOX_WORKSPACE = '/workspace';
export const SANDBOX_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/** /etc entries bound read-only when the host has them: libc, DNS, TLS roots, Debian alternatives. */
const ETC_ENTRIES = [
  'alternatives',
  'ca-certificates',
  'ca-certificates.conf',
  'debian_version',
  'gai.conf',
  'host.conf',
  'hosts',
  'ld.so.cache',
  'ld.so.conf',
  'ld.so.conf.d',
  'localtime',
  'mime.types',
  'nsswitch.conf',
  'os-release',
  'protocols',
  'resolv.conf',
  'services',
  'ssl',
  'timezone',
];

export interface SandboxLimits {
  /** CPU seconds per process (SIGXCPU, then SIGKILL a second later). */
  cpuSeconds: number;
  /** Address space per process, in MiB. */
  memoryMb: number;
  /** Processes (and threads) of the sandbox at once. */
  maxProcesses: number;
  /** Largest file a process may write, in MiB. */
  maxFileMb: number;
  /** Size of /tmp and of /dev/shm (each a tmpfs, held in memory), in MiB. */
  tmpSizeMb: number;
}

/** A top-level system directory of the host: a link into /usr (merged /usr) or a directory of its own. */
export interface SystemDir {
  name: string;
  /** The link's target when the host's entry is a symbolic link. */
  link?: string;
}

/** The names of the top-level system directories bound besides /usr, when the host has them. */
const SYSTEM_DIR_NAMES = ['bin', 'sbin', 'lib', 'lib32', 'lib64', 'libx32'];

/** Reads how the host lays out its system directories (once, at start-up). */
export function hostSystemDirs(root = '/'): SystemDir[] {
  const dirs: SystemDir[] = [];
  for (const name of SYSTEM_DIR_NAMES) {
    const full = path.join(root, name);
    let info: Stats;
    try {
      info = lstatSync(full);
    } catch {
      continue;
    }
    if (info.isSymbolicLink()) dirs.push({ name, link: readlinkSync(full) });
    else if (info.isDirectory()) dirs.push({ name });
  }
  return dirs;
}

export interface SandboxSpec {
  /** The workspace directory on the host (its real path). */
  workspaceDir: string;
  /** The conversation's egress proxy URL: with one the sandbox shares the network, else it has none. */
  proxyUrl: string | null;
  limits: SandboxLimits;
  /** hostSystemDirs(). */
  systemDirs: readonly SystemDir[];
}

const MIB = 1024 * 1024;

/** The bwrap options (given through SANDBOX_FDS.args); the command follows from sandboxCommand(). */
export function bwrapOptions(spec: SandboxSpec): string[] {
  const { limits } = spec;
  const args = [
    '--unshare-all',
    // Explicit, because --disable-userns requires it (bwrap as root would otherwise not create one).
    '--unshare-user',
    '--disable-userns',
    '--uid',
    String(SANDBOX_UID),
    '--gid',
    String(SANDBOX_GID),
    '--hostname',
    'sandbox',
    '--die-with-parent',
    // A new session: the command cannot reach a terminal of ours (TIOCSTI) or our process group.
    '--new-session',
    '--ro-bind',
    '/usr',
    '/usr',
  ];
  for (const dir of spec.systemDirs) {
    if (dir.link !== undefined) args.push('--symlink', dir.link, `/${dir.name}`);
    else args.push('--ro-bind', `/${dir.name}`, `/${dir.name}`);
  }
  args.push('--perms', '0755', '--dir', '/etc');
  for (const entry of ETC_ENTRIES) args.push('--ro-bind-try', `/etc/${entry}`, `/etc/${entry}`);
  args.push(
    '--perms',
    '0644',
    '--ro-bind-data',
    String(SANDBOX_FDS.passwd),
    '/etc/passwd',
    '--perms',
    '0644',
    '--ro-bind-data',
    String(SANDBOX_FDS.group),
    '/etc/group',
    '--proc',
    '/proc',
    '--dev',
    '/dev',
    '--perms',
    '1777',
    '--size',
    String(limits.tmpSizeMb * MIB),
    '--tmpfs',
    '/dev/shm',
    '--perms',
    '1777',
    '--size',
    String(limits.tmpSizeMb * MIB),
    '--tmpfs',
    '/tmp',
    '--dir',
    '/var',
    '--symlink',
    '../tmp',
    '/var/tmp',
    '--bind',
    spec.workspaceDir,
    SANDBOX_WORKSPACE,
    '--chdir',
    SANDBOX_WORKSPACE,
    // bwrap's root and /dev are unbounded tmpfs: read-only, so writing there cannot fill memory.
    '--remount-ro',
    '/dev',
    '--remount-ro',
    '/',
    '--info-fd',
    String(SANDBOX_FDS.info),
    '--clearenv',
  );
  if (spec.proxyUrl === null) args.push('--unshare-net');
  else args.push('--share-net');
  for (const [name, value] of Object.entries(sandboxEnv(spec.proxyUrl))) args.push('--setenv', name, value);
  return args;
}

/** The command's environment: nothing of the gateway's. */
export function sandboxEnv(proxyUrl: string | null): Record<string, string> {
  const env: Record<string, string> = {
    PATH: SANDBOX_PATH,
    HOME: SANDBOX_WORKSPACE,
    USER: 'sandbox',
    LOGNAME: 'sandbox',
    SHELL: '/bin/sh',
    LANG: 'C.UTF-8',
    TMPDIR: '/tmp',
  };
  if (proxyUrl !== null) {
    // Both spellings: curl reads lower case (and ignores upper-case HTTP_PROXY), most others upper case.
    for (const name of ['HTTP_PROXY', 'HTTPS_PROXY', 'ALL_PROXY']) {
      env[name] = proxyUrl;
      env[name.toLowerCase()] = proxyUrl;
    }
  }
  return env;
}

/**
 * The program bwrap runs: a first shell (bash, for closing descriptors above 9: bwrap passes on all the
 * gateway's) that sets the rlimits (a soft CPU limit, then a hard one a second later for a process that
 * ignores SIGXCPU), closes every descriptor but stdio, says it started, and becomes `/bin/sh -c <command>`.
 */
export function sandboxCommand(command: string, limits: SandboxLimits): string[] {
  const setLimits = [
    `ulimit -S -t ${limits.cpuSeconds}`,
    `ulimit -H -t ${limits.cpuSeconds + 1}`,
    `ulimit -v ${limits.memoryMb * 1024}`,
    `ulimit -u ${limits.maxProcesses}`,
    // 1024-byte blocks (bash outside POSIX mode).
    `ulimit -f ${limits.maxFileMb * 1024}`,
  ].join(' && ');
  const script = [
    `${setLimits} || { echo 'svc_shell: the sandbox could not set its limits' >&2; exit 125; }`,
    `for fd in /proc/self/fd/*; do fd=\${fd##*/}; case $fd in 0|1|2|${SANDBOX_FDS.started}) ;; *) eval "exec $fd>&-" 2>/dev/null ;; esac; done`,
    `printf 1 >&${SANDBOX_FDS.started}`,
    `exec ${SANDBOX_FDS.started}>&-`,
    'exec /bin/sh -c "$1"',
  ].join('\n');
  return ['/bin/bash', '-c', script, 'sandbox', command];
}

/** /etc/passwd and /etc/group of the sandbox: root (owner of what is not the sandbox's) and the sandbox user. */
export function sandboxAccounts(): { passwd: string; group: string } {
  return {
    passwd: [
      'root:x:0:0:root:/root:/usr/sbin/nologin',
      `sandbox:x:${SANDBOX_UID}:${SANDBOX_GID}:sandbox:${SANDBOX_WORKSPACE}:/bin/sh`,
      'nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin',
      '',
    ].join('\n'),
    group: ['root:x:0:', `sandbox:x:${SANDBOX_GID}:`, 'nogroup:x:65534:', ''].join('\n'),
  };
}
