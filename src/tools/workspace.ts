// Per-conversation workspaces: one directory per (organization, conversation) under the configured
// root (tools.workspaceDir, default <store.path>/workspaces), shared by the file tools, the shell's
// sandbox (mounted read-write there and nowhere else), downloads and browser screenshots.
//
// A path a model names is relative to its workspace; resolve() refuses anything that leaves it:
// `..`, absolute paths, and symbolic links (a link the shell made to /etc is not followed out).
import { mkdir, realpath, rm } from 'node:fs/promises';
import path from 'node:path';
import { ToolFailure } from './types';

const SAFE_SEGMENT = /^[A-Za-z0-9_.-]{1,128}$/;

/** A directory name for an id (ids are ours, but a segment never carries a separator or `..`). */
function segment(id: string): string {
  if (SAFE_SEGMENT.test(id) && id !== '.' && id !== '..') return id;
  return Buffer.from(id).toString('base64url').slice(0, 128) || '_';
}

export class Workspace {
  private made: Promise<string> | null = null;

  constructor(readonly root: string) {}

  /** Creates the directory (once) and returns its real path. */
  ensure(): Promise<string> {
    this.made ??= mkdir(this.root, { recursive: true, mode: 0o700 }).then(() => realpath(this.root));
    return this.made;
  }

  /**
   * The absolute path of `relative` inside the workspace. Refuses (ToolFailure) a path that is
   * absolute, climbs out with `..`, or passes through a symbolic link that points outside. A path
   * that does not exist yet is checked through its nearest existing parent.
   */
  async resolve(relative: string): Promise<string> {
    const root = await this.ensure();
    if (typeof relative !== 'string') throw new ToolFailure('The path must be a string.');
    if (relative.includes('\0')) throw new ToolFailure('The path contains a NUL character.');
    const cleaned = relative.trim() === '' ? '.' : relative;
    if (path.isAbsolute(cleaned)) throw new ToolFailure(`The path ${JSON.stringify(relative)} is absolute; paths are relative to the workspace.`);
    const target = path.resolve(root, cleaned);
    if (!within(root, target)) throw new ToolFailure(`The path ${JSON.stringify(relative)} leaves the workspace.`);
    // The deepest part that exists, resolved through links, must still be inside.
    let probe = target;
    for (;;) {
      try {
        const real = await realpath(probe);
        if (!within(root, real)) throw new ToolFailure(`The path ${JSON.stringify(relative)} leads outside the workspace through a link.`);
        break;
      } catch (err) {
        if (err instanceof ToolFailure) throw err;
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
        const parent = path.dirname(probe);
        if (parent === probe) break;
        probe = parent;
      }
    }
    return target;
  }

  /** The workspace-relative form of an absolute path inside it (what tools show the model). */
  relative(absolute: string): string {
    return path.relative(this.root, absolute).split(path.sep).join('/') || '.';
  }
}

function within(root: string, target: string): boolean {
  return target === root || target.startsWith(root.endsWith(path.sep) ? root : root + path.sep);
}

export class Workspaces {
  private readonly cache = new Map<string, Workspace>();

  constructor(readonly root: string) {}

  /** The workspace of a conversation of an organization (not created until a tool uses it). */
  of(orgId: string, conversationId: string): Workspace {
    const dir = this.dirOf(orgId, conversationId);
    let workspace = this.cache.get(dir);
    if (!workspace) {
      workspace = new Workspace(dir);
      // Bounded: a long-lived process sees many conversations; an evicted entry is cheap to remake.
      if (this.cache.size >= 10_000) this.cache.delete(this.cache.keys().next().value as string);
      this.cache.set(dir, workspace);
    }
    return workspace;
  }

  /** Deletes a conversation's workspace with what is in it (the conversation went); none is fine. */
  async remove(orgId: string, conversationId: string): Promise<void> {
    const dir = this.dirOf(orgId, conversationId);
    this.cache.delete(dir);
    await rm(dir, { recursive: true, force: true });
  }

  private dirOf(orgId: string, conversationId: string): string {
    return path.join(this.root, segment(orgId), segment(conversationId));
  }
}
