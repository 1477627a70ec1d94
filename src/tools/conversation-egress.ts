// The conversation's egress profile (EgressState): which of its organization's named proxies
// (organizations[].tools.egressProfiles) svc_vpn_connect chose for it. The choice is stored as the
// profile's name in the store's tool state, never the URL: the URL (and the password it may hold) stays
// in the configuration, and an operator who rotates it changes every connected conversation at once.
//
// No in-process cache: every process must see a connect or disconnect at once (a stale "direct" would
// send a conversation's traffic past the proxy it asked for), and a primary-key read costs far less
// than the web request it governs.
import type { EgressProfileConfig, GatewayConfig } from '../config/types';
import type { Store } from '../store/port';
import { ToolFailure, type EgressState } from './types';

/** The tool-state key of a conversation's egress profile name. */
export const EGRESS_PROFILE_KEY = 'egress.profile';

export interface EgressProfile {
  name: string;
  /** The proxy URL: a secret, for dispatchers only (never an output or a log line). */
  url: string;
  description?: string;
}

export class ConversationEgress implements EgressState {
  constructor(
    private readonly config: GatewayConfig,
    private readonly store: Store,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /** The organization's profiles, by name. */
  profiles(orgId: string): EgressProfile[] {
    const configured: Record<string, EgressProfileConfig> = this.config.organizations.find((o) => o.id === orgId)?.tools.egressProfiles ?? {};
    return Object.entries(configured)
      .map(([name, profile]) => ({ name, url: profile.url, ...(profile.description !== undefined ? { description: profile.description } : {}) }))
      .sort((a, b) => a.name.localeCompare(b.name));
  }

  /**
   * The conversation's connected profile, or null (direct). A profile the configuration no longer has
   * fails the call (ToolFailure): traffic meant for a proxy never silently goes out directly.
   */
  async profileFor(orgId: string, conversationId: string): Promise<EgressProfile | null> {
    const name = await this.store.toolState.get(orgId, conversationId, EGRESS_PROFILE_KEY);
    if (name === null) return null;
    const profile = this.profiles(orgId).find((p) => p.name === name);
    if (!profile) {
      throw new ToolFailure(
        `This conversation is connected to egress profile "${name}", which this organization no longer has; call svc_vpn_disconnect to go out directly, or svc_vpn_connect with one of: ${this.names(orgId)}.`,
      );
    }
    return profile;
  }

  async proxyFor(orgId: string, conversationId: string): Promise<string | null> {
    return (await this.profileFor(orgId, conversationId))?.url ?? null;
  }

  /** Connects the conversation to the named profile; returns it with the name it replaced (null when none). */
  async connect(orgId: string, conversationId: string, name: string): Promise<{ profile: EgressProfile; previous: string | null }> {
    const profiles = this.profiles(orgId);
    if (profiles.length === 0) {
      throw new ToolFailure('This organization has no egress profiles: web traffic can only go out directly.');
    }
    const profile = profiles.find((p) => p.name === name);
    if (!profile) throw new ToolFailure(`No egress profile named ${JSON.stringify(name)}. Available: ${this.names(orgId)}.`);
    const previous = await this.store.toolState.get(orgId, conversationId, EGRESS_PROFILE_KEY);
    await this.store.toolState.set(orgId, conversationId, EGRESS_PROFILE_KEY, profile.name, this.now().toISOString());
    return { profile, previous };
  }

  /** Back to direct; returns the profile name it was connected to (null when none). */
  async disconnect(orgId: string, conversationId: string): Promise<string | null> {
    const previous = await this.store.toolState.get(orgId, conversationId, EGRESS_PROFILE_KEY);
    if (previous === null) return null;
    await this.store.toolState.delete(orgId, conversationId, EGRESS_PROFILE_KEY);
    return previous;
  }

  /** The conversation went: its choice goes too. */
  async forget(conversationId: string): Promise<void> {
    await this.store.toolState.forget(conversationId, EGRESS_PROFILE_KEY);
  }

  /** The organization's profiles for a message: names with their descriptions. */
  private names(orgId: string): string {
    const profiles = this.profiles(orgId);
    if (profiles.length === 0) return '(none)';
    return profiles.map((p) => (p.description ? `"${p.name}" (${p.description})` : `"${p.name}"`)).join(', ');
  }
}
