// When the gateway runs as root, the sandbox runs as an unprivileged host user (tools.shell.sandboxUid),
// never as root: a uid-0 sandbox would own every root file it can see and is exempt from the process
// limit. That user must reach and own the workspace: bwrap (unprivileged) resolves the workspace path
// itself, so the directories from the workspaces root down get search permission for others (not
// listing), and the workspace tree is handed to the sandbox user (files the gateway wrote there, as
// root, included), so commands can change what svc_file_write made.
//
// Called with no sandbox of the workspace running (index.ts runs a workspace's commands one at a
// time), so nothing swaps a directory for a link during the walk; links are re-owned, never followed.
import { chmod, lchown, lstat, readdir, realpath } from 'node:fs/promises';
import path from 'node:path';
import type { HostUser } from './sandbox';

/** Gives others search permission on the directories from `workspacesRoot` down to the workspace's parent. */
export async function openPathTo(workspaceDir: string, workspacesRoot: string): Promise<void> {
  const root = await realpath(workspacesRoot);
  const relative = path.relative(root, path.dirname(workspaceDir));
  if (relative.startsWith('..') || path.isAbsolute(relative)) return;
  let dir = root;
  const dirs = [dir];
  for (const part of relative.split(path.sep).filter(Boolean)) {
    dir = path.join(dir, part);
    dirs.push(dir);
  }
  for (const each of dirs) {
    const info = await lstat(each);
    if (info.isDirectory() && (info.mode & 0o001) === 0) await chmod(each, (info.mode & 0o7777) | 0o001);
  }
}

/** Makes `user` the owner of the workspace and everything in it. */
export async function handOver(workspaceDir: string, user: HostUser): Promise<void> {
  const pending = [workspaceDir];
  for (let dir = pending.pop(); dir !== undefined; dir = pending.pop()) {
    const info = await lstat(dir);
    if (info.uid !== user.uid || info.gid !== user.gid) await lchown(dir, user.uid, user.gid);
    if (!info.isDirectory()) continue;
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) {
        pending.push(full);
        continue;
      }
      const child = await lstat(full);
      if (child.uid !== user.uid || child.gid !== user.gid) await lchown(full, user.uid, user.gid);
    }
  }
}

/** Runs `work` once every earlier piece of work queued under the same key has finished. */
export class KeyedQueue {
  private readonly tails = new Map<string, Promise<unknown>>();

  run<T>(key: string, work: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    const next = previous.then(work, work);
    const tail = next.catch(() => undefined);
    this.tails.set(key, tail);
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return next;
  }
}
