import { createHmac, timingSafeEqual } from 'node:crypto';
import type { MockDeps } from './deps';
import type { DeliverableRecord, MockState } from './state';

/**
 * Deliverable view links: `{app_url}/deliverables/<id>/view?token=<expiry>.<mac>`, where the MAC
 * is an HMAC-SHA256 (keyed with `state.signingSecret`) over the deliverable id and the expiry.
 * Stateless on purpose: every read hands out a fresh link without growing the state, and a link
 * cannot be moved to another deliverable or given a later expiry without the secret.
 */

export interface ViewLink {
  view_link: string;
  expires_at: string;
}

export type ViewTokenCheck = 'valid' | 'expired' | 'invalid';

/** A link valid for the deliverable's `view_link_hours` from now (virtual clock, whole seconds). */
export function issueViewLink(deps: MockDeps, deliverable: DeliverableRecord): ViewLink {
  const expiresAtSeconds = Math.floor(deps.clock.nowMs() / 1000) + deliverable.view_link_hours * 3600;
  const token = `${expiresAtSeconds}.${mac(deps.store.state, deliverable.id, expiresAtSeconds)}`;
  const url = new URL(`deliverables/${deliverable.id}/view`, withTrailingSlash(deps.settings.appUrl));
  url.searchParams.set('token', token);
  return { view_link: url.toString(), expires_at: new Date(expiresAtSeconds * 1000).toISOString() };
}

export function checkViewToken(deps: MockDeps, deliverableId: number, token: string): ViewTokenCheck {
  const match = /^(\d{1,12})\.([A-Za-z0-9_-]{43})$/.exec(token);
  if (!match) return 'invalid';
  const expiresAtSeconds = Number(match[1]);
  const given = Buffer.from(match[2]!, 'base64url');
  const expected = Buffer.from(mac(deps.store.state, deliverableId, expiresAtSeconds), 'base64url');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return 'invalid';
  return deps.clock.nowMs() >= expiresAtSeconds * 1000 ? 'expired' : 'valid';
}

function mac(state: MockState, deliverableId: number, expiresAtSeconds: number): string {
  return createHmac('sha256', state.signingSecret).update(`view:${deliverableId}:${expiresAtSeconds}`).digest('base64url');
}

function withTrailingSlash(url: string): string {
  return url.endsWith('/') ? url : `${url}/`;
}
