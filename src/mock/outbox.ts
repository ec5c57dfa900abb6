import { NOTIFICATION_DEFAULTS } from '../contract';
import type { MockDeps } from './deps';
import type { OutboxEmail, PartnerRecord, UserRecord } from './state';

/** Sender name of every email that is not partner-branded. */
export const SERVICE_SENDER = 'Tax Preparation Service';

export interface NotificationSettingsInput {
  partner_branded?: boolean | undefined;
  custom_subject?: string | undefined;
  custom_message?: string | undefined;
  include_instructions?: boolean | undefined;
}

const INSTRUCTIONS = [
  'How to use this link:',
  '1. Open the link in your browser. It works once, and only until it expires.',
  '2. Set up your permanent sign-in when asked.',
  '3. If the link has expired or was already used, ask us for a new one.',
].join('\n');

/**
 * The email a login-link generation sends, with `notification_settings` applied (docs/contract-notes.md): `custom_subject` replaces the subject, `custom_message` comes before the link,
 * `include_instructions` (default true) adds how-to steps, and `partner_branded` sends it in the
 * partner's name instead of the service's.
 */
export function sendLoginLinkEmail(
  deps: MockDeps,
  target: { user: UserRecord; partner: PartnerRecord; loginLink: string; expiresAt: string },
  settings: NotificationSettingsInput = {},
): OutboxEmail {
  const branded = settings.partner_branded ?? NOTIFICATION_DEFAULTS.partner_branded;
  const includeInstructions = settings.include_instructions ?? NOTIFICATION_DEFAULTS.include_instructions;
  const sender = branded ? target.partner.name : SERVICE_SENDER;
  const body = [
    `Hello ${target.user.first_name},`,
    settings.custom_message,
    `Your secure login link: ${target.loginLink}`,
    `It expires at ${target.expiresAt}.`,
    includeInstructions ? INSTRUCTIONS : undefined,
    `— ${sender}`,
  ]
    .filter((paragraph) => paragraph !== undefined && paragraph !== '')
    .join('\n\n');
  return send(deps, {
    to: target.user.email,
    from: sender,
    subject: settings.custom_subject ?? NOTIFICATION_DEFAULTS.custom_subject,
    body,
    kind: 'login_link',
    account_id: target.user.account_id,
    partner_branded: branded,
  });
}

/** The invitation a spouse added with `send_invitation` (default true) receives. */
export function sendSpouseInvitation(
  deps: MockDeps,
  target: { spouse: UserRecord; primary: UserRecord; partner: PartnerRecord; loginLink: string; expiresAt: string },
): OutboxEmail {
  const body = [
    `Hello ${target.spouse.first_name},`,
    `${target.primary.first_name} ${target.primary.last_name} added you to their tax preparation account with ${target.partner.name}.`,
    `Your secure login link: ${target.loginLink}`,
    `It expires at ${target.expiresAt}.`,
    INSTRUCTIONS,
    `— ${SERVICE_SENDER}`,
  ].join('\n\n');
  return send(deps, {
    to: target.spouse.email,
    from: SERVICE_SENDER,
    subject: 'You are invited to your tax preparation account',
    body,
    kind: 'spouse_invitation',
    account_id: target.spouse.account_id,
    partner_branded: false,
  });
}

function send(deps: MockDeps, email: Omit<OutboxEmail, 'id' | 'sent_at'>): OutboxEmail {
  const stored: OutboxEmail = { id: deps.store.nextId('email'), ...email, sent_at: deps.clock.nowIso() };
  deps.store.state.outbox.push(stored);
  return stored;
}
