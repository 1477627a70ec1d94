// What the stored-file tools (and svc_file_share_with_user) take from a call: string arguments, and
// the call's user as a viewer of stored files.
import type { FileViewer } from '../../../store/types';
import { ToolFailure, type ToolCallContext } from '../../types';

/** An optional non-empty string argument (undefined when absent). */
export function stringArg(args: Record<string, unknown>, name: string): string | undefined {
  const value = args[name];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string' || value.trim() === '') throw new ToolFailure(`Argument ${name} must be a non-empty string.`);
  return value;
}

/**
 * The call's user in its organization, as the API shows that user's files: a model acts for its user,
 * so an organization admin's call does not reach the other users' files.
 */
export function viewerOfCall(ctx: ToolCallContext): FileViewer {
  return { orgId: ctx.orgId, userId: ctx.userId, admin: false };
}
