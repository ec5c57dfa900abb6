import { CreateAccountRequest } from '../../contract/requests';
import type { TolerantResponseOf } from '../../api/tolerant';
import type { Context } from '../../types';
import { createOutput, type CardSection, type Format } from '../../output';
import { sanitizeLine } from '../../output/sanitize';
import { confirmBeforeActing } from '../confirmation';
import { flagConflict, parseFlagFields } from '../parseFlags';
import { attributeOf, longName } from '../spec';
import type { RawInvocation } from '../types';
import { SPOUSE_FLAGS, createAccount } from './register';
import { accountsSession, creationLinksOf, rememberCreated, rememberCreationLinks } from './ledger';

export interface CreateAccountOptions {
  body: CreateAccountRequest;
  /** `--yes`: act without the terminal's question. */
  yes: boolean;
}

/** A spouse comes with all three spouse flags or none: a rule between flags, checked before the contract's. */
export function parseOptions(raw: RawInvocation): CreateAccountOptions {
  const { flags } = raw;
  const missing = SPOUSE_FLAGS.filter((flag) => flags[attributeOf(flag)] === undefined).map(longName);
  if (missing.length > 0 && missing.length < SPOUSE_FLAGS.length) {
    throw flagConflict(`a spouse needs all of --spouse-email, --spouse-first-name and --spouse-last-name; missing ${missing.join(' and ')}`);
  }
  if (flags.spouseInvitation === false && missing.length > 0) {
    throw flagConflict('--no-spouse-invitation applies to a spouse; add --spouse-email, --spouse-first-name and --spouse-last-name');
  }
  return { body: parseFlagFields(CreateAccountRequest, createAccount.flags!, flags), yes: flags.yes === true };
}

export async function run(ctx: Context, options: CreateAccountOptions): Promise<void> {
  const out = createOutput(ctx);
  const [api, session] = await Promise.all([ctx.api(), accountsSession(ctx)]);
  const { email, spouse } = options.body;
  if (spouse !== undefined && spouse.send_invitation !== false) {
    await confirmBeforeActing(ctx, options.yes, async () => [
      `This will create the account of ${sanitizeLine(email)}`,
      `and email the spouse, ${sanitizeLine(spouse.email)}, an invitation with a login link.`,
    ]);
  }
  const response = await api.call('createAccount', { body: options.body });
  await rememberCreated(ctx, session, response.data, options.body.email);
  await rememberCreationLinks(ctx, session, creationLinksOf(session, response.data, options.body.email, ctx.clock.now()));
  if (ctx.globals.json) return out.json(response.json);
  await out.card(createdAccountCard(response.data, out.format));
}

export function createdAccountCard(account: TolerantResponseOf<'createAccount'>, format: Format): CardSection[] {
  const sections: CardSection[] = [
    {
      title: `Account ${format.text(account.id)}`,
      rows: [
        ['Name', format.name(account.first_name, account.last_name)],
        ['Email', format.text(account.email)],
        ['Status', format.status(account.status)],
        ['Created', format.date(account.created_at)],
        ['Login link', account.login_link === undefined || account.login_link === null ? 'none in the answer' : format.text(account.login_link)],
        ['Link expires', format.date(account.login_link_expires_at)],
      ],
    },
  ];
  const { spouse } = account;
  if (typeof spouse === 'object' && spouse !== null) {
    sections.push({
      title: `Spouse user ${format.text(spouse.id)}`,
      rows: [
        ['Name', format.name(spouse.first_name, spouse.last_name)],
        ['Email', format.text(spouse.email)],
        ['Status', format.status(spouse.status)],
        ['Login link', spouse.login_link === undefined || spouse.login_link === null ? 'none yet (no invitation sent)' : format.text(spouse.login_link)],
        ['Link expires', spouse.login_link_expires_at === undefined || spouse.login_link_expires_at === null ? undefined : format.date(spouse.login_link_expires_at)],
      ],
    });
  }
  return sections;
}
