// svc_vpn_connect, svc_vpn_disconnect: choose which of the organization's egress profiles (named HTTP
// or SOCKS proxies, organizations[].tools.egressProfiles) the conversation's web tools go out through.
// The choice is per conversation and lives in the store (ConversationEgress), so every process sees
// it and it survives a restart. Outputs and logs name the profile, never its URL (it may hold a password).
import { ConversationEgress } from '../../conversation-egress';
import { ToolFailure, type HostedTool, type HostedToolFactory } from '../../types';

export const vpnTools: HostedToolFactory = (deps) => {
  // Its own instance over the shared store: no cache, so it and deps.egress always agree.
  const egress = new ConversationEgress(deps.config, deps.store, deps.now);

  const connect: HostedTool = {
    type: 'svc_vpn_connect',
    description:
      "Connect this conversation's network egress to one of the organization's VPN egress profiles: web downloads, the browser and the shell then go out through it until svc_vpn_disconnect. An unknown profile name is answered with the list of profiles.",
    parameters: {
      type: 'object',
      properties: { profile: { type: 'string', description: 'Name of the egress profile.' } },
      required: ['profile'],
      additionalProperties: false,
    },
    async execute(args, ctx) {
      const name = args['profile'];
      if (typeof name !== 'string' || name.trim() === '') throw new ToolFailure('Argument profile must be the name of an egress profile.');
      const { profile, previous } = await egress.connect(ctx.orgId, ctx.conversationId, name.trim());
      deps.logger.info('egress profile connected', { orgId: ctx.orgId, conversationId: ctx.conversationId, profile: profile.name });
      const what = profile.description ? `"${profile.name}" (${profile.description})` : `"${profile.name}"`;
      if (previous === profile.name) return { output: `Already connected to egress profile ${what}.` };
      const switched = previous !== null ? ` (switched from "${previous}")` : '';
      return { output: `Connected to egress profile ${what}${switched}: this conversation's web traffic now goes out through it.` };
    },
  };

  const disconnect: HostedTool = {
    type: 'svc_vpn_disconnect',
    description: 'Disconnect this conversation from its VPN egress profile: web traffic goes out directly again.',
    parameters: { type: 'object', properties: {}, additionalProperties: false },
    async execute(_args, ctx) {
      const previous = await egress.disconnect(ctx.orgId, ctx.conversationId);
      if (previous === null) return { output: 'Not connected to an egress profile: web traffic already goes out directly.' };
      deps.logger.info('egress profile disconnected', { orgId: ctx.orgId, conversationId: ctx.conversationId, profile: previous });
      return { output: `Disconnected from egress profile "${previous}": web traffic now goes out directly.` };
    },
  };

  return { tools: [connect, disconnect], forget: (conversationId) => egress.forget(conversationId) };
};
