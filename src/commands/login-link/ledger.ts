import { ledgerPlaceOf } from '../../state/backend';
import type { Context } from '../../types';
import { LOGIN_LINKS, readLedger } from '../../batch/ledgers/loginLinks';
import { createOutput, dateColumn, freeText, label } from '../../output';
import type { RawInvocation } from '../types';
import { renewalNow } from './renewalNow';

export interface LedgerOptions {
  ledgerPath: string | undefined;
}

export function parseOptions(raw: RawInvocation): LedgerOptions {
  return { ledgerPath: typeof raw.flags.ledger === 'string' ? raw.flags.ledger : undefined };
}

/** `taxprep login-link ledger`: the last link per user, expiring soonest first, then uncertain ones. */
export async function run(ctx: Context, options: LedgerOptions): Promise<void> {
  const ledger = await readLedger((await ledgerPlaceOf(LOGIN_LINKS, ctx, options)).lines);
  const path = ledger.where;
  const links = ledger.links();
  const uncertain = ledger.uncertainIntents();
  const out = createOutput(ctx);

  if (ctx.globals.json) {
    return out.json({
      ledger: path,
      links: links.map((entry) => ({
        origin: entry.origin,
        profile: entry.profile,
        account_id: entry.account_id,
        user_email: entry.link.user_email,
        purpose: entry.link.purpose,
        expires_at: entry.link.expires_at,
        created_at: entry.link.created_at,
      })),
      uncertain: uncertain.map((entry) => ({
        origin: entry.origin,
        profile: entry.profile,
        account_id: entry.account_id,
        user_email: entry.user_email,
        intent_at: entry.at,
      })),
    });
  }
  if (links.length === 0 && uncertain.length === 0) return out.note(`The ledger ${path} holds no login links yet.`);

  const now = renewalNow(ctx).getTime();
  const { format } = out;
  if (links.length > 0) {
    await out.table(
      [
        'Account',
        freeText('User', { min: 26 }),
        label('Purpose'),
        dateColumn('Expires'),
        'State',
        dateColumn('Created', { drop: 3 }),
        { title: 'Profile', drop: 2 },
        freeText('Service', { drop: 1 }),
      ],
      links.map((entry) => [
        String(entry.account_id),
        format.text(entry.link.user_email),
        format.text(entry.link.purpose),
        format.date(entry.link.expires_at),
        format.status(Date.parse(entry.link.expires_at) > now ? 'valid' : 'expired'),
        format.date(entry.link.created_at),
        entry.profile ?? '-',
        entry.origin,
      ]),
    );
  }
  if (uncertain.length > 0) {
    await out.note(
      `${uncertain.length} link${uncertain.length === 1 ? ' was' : 's were'} requested without an answer (a run was interrupted); they may exist:\n` +
        uncertain.map((entry) => `  account ${entry.account_id}${entry.user_email ? ` (${entry.user_email})` : ''}, asked ${entry.at}`).join('\n') +
        '\nRenewal holds them back; re-run with --reissue-uncertain to generate them anyway.',
    );
  }
}
