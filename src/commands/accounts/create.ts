import { CreateAccountRequest } from '../../contract/requests';
import type { TolerantResponseOf } from '../../api/tolerant';
import type { Context } from '../../context';
import { createOutput, type CardSection, type Format } from '../../output';
import { definedOnly, flagConflict, parseWithFlags, type FlagNames } from '../parseFlags';
import type { RawInvocation } from '../types';

export interface CreateAccountOptions {
  body: CreateAccountRequest;
}

const FLAG_OF_FIELD: FlagNames = {
  email: '--email',
  first_name: '--first-name',
  last_name: '--last-name',
  spouse: '--spouse-email',
  'spouse.email': '--spouse-email',
  'spouse.first_name': '--spouse-first-name',
  'spouse.last_name': '--spouse-last-name',
};

const SPOUSE_FLAGS = [
  ['spouseEmail', '--spouse-email'],
  ['spouseFirstName', '--spouse-first-name'],
  ['spouseLastName', '--spouse-last-name'],
] as const;

export function parseOptions(raw: RawInvocation): CreateAccountOptions {
  const { flags } = raw;
  const givenSpouseFlags = SPOUSE_FLAGS.filter(([key]) => flags[key] !== undefined);
  if (givenSpouseFlags.length > 0 && givenSpouseFlags.length < SPOUSE_FLAGS.length) {
    const missing = SPOUSE_FLAGS.filter(([key]) => flags[key] === undefined).map(([, flag]) => flag);
    throw flagConflict(`a spouse needs all of --spouse-email, --spouse-first-name and --spouse-last-name; missing ${missing.join(' and ')}`);
  }
  const withSpouse = givenSpouseFlags.length === SPOUSE_FLAGS.length;
  if (flags.spouseInvitation === false && !withSpouse) {
    throw flagConflict('--no-spouse-invitation applies to a spouse; add --spouse-email, --spouse-first-name and --spouse-last-name');
  }
  const body = definedOnly({
    email: flags.email,
    first_name: flags.firstName,
    last_name: flags.lastName,
    spouse: withSpouse
      ? definedOnly({
          email: flags.spouseEmail,
          first_name: flags.spouseFirstName,
          last_name: flags.spouseLastName,
          send_invitation: flags.spouseInvitation === false ? false : undefined,
        })
      : undefined,
  });
  return { body: parseWithFlags(CreateAccountRequest, body, FLAG_OF_FIELD) };
}

export async function run(ctx: Context, options: CreateAccountOptions): Promise<void> {
  const out = createOutput(ctx);
  const api = await ctx.api();
  const response = await api.call('createAccount', { body: options.body });
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
