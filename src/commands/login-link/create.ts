import { createHash } from 'node:crypto';
import type { Context } from '../../types';
import { itemsFromArguments, readAccountInput, type AccountItem } from '../../batch/accountInput';
import { UsageError } from '../../errors';
import { createOutput } from '../../output';
import { flagConflict } from '../parseFlags';
import type { RawInvocation } from '../types';
import { confirmBeforeActing } from '../confirmation';
import { runLinkBatch, uncertainError, type BatchPlan } from './batch';
import { batchStatement, singleLinkStatement } from './confirm';
import { generateLink, openSession, requestBody, targetOf, withLedger, type Session } from './generate';
import { parseRunFlags, type RunFlags } from './options';
import { loginLink } from './register';

export interface LoginLinkOptions extends RunFlags {
  /** Ids given as arguments, already checked; undefined when they come from `--from`. */
  items: AccountItem[] | undefined;
  /** `--from FILE`, `-` for stdin. */
  from: string | undefined;
  /** `--restart`: generate every link again even if the same batch has an unfinished run. */
  restart: boolean;
}

export function parseOptions(raw: RawInvocation): LoginLinkOptions {
  // The parser gives the variadic ids as an array (empty without any), and `--from <file>` as a string.
  const ids = raw.args[0] as string[];
  const from = raw.flags.from as string | undefined;
  if (ids.length === 0 && from === undefined) throw new UsageError('give one or more account ids, or --from FILE (- for stdin)', { hint: 'Run `taxprep login-link --help` for examples.' });
  if (ids.length > 0 && from !== undefined) throw flagConflict('give account ids or --from FILE, not both');
  const flags = parseRunFlags(loginLink.flags!, raw.flags);
  if (flags.request.user_email !== undefined && (from !== undefined || ids.length > 1)) {
    throw flagConflict('--user-email names a user of one account; for several accounts give a user_email column in a --from CSV or NDJSON file');
  }
  return { ...flags, items: ids.length > 0 ? itemsFromArguments(ids) : undefined, from, restart: raw.flags.restart === true };
}

export async function run(ctx: Context, options: LoginLinkOptions): Promise<number> {
  const items = options.items ?? (await readItems(ctx, options.from!));
  const session = await openSession(ctx);
  if (options.items?.length === 1) {
    const item = options.items[0]!;
    await confirmBeforeActing(ctx, options.yes, (asking) => singleLinkStatement(session, options, item, asking));
    await generateSingle(session, options, item);
    return 0;
  }
  // Asked before the ledger's lock is taken: a person deciding must not hold up a cron run.
  await confirmBeforeActing(ctx, options.yes, () => batchStatement(session, options, items));
  return withLedger(ctx, options, async (ledger) => {
    // The same batch asked again before it finished resumes: what got a link is not sent twice.
    const digest = batchDigest(session, options, items);
    let unfinished = ledger.unfinishedRun(digest);
    if (unfinished && options.restart) {
      await ledger.endRun(unfinished.entry.run, ctx.clock.now());
      unfinished = undefined;
    }
    const plan: BatchPlan = { send: [], settled: [] };
    for (const item of items) {
      const target = targetOf(session, item);
      const uncertain = ledger.uncertainIntent(target);
      if (unfinished?.issuedFor(target)) plan.settled.push({ kind: 'skipped', item, reason: 'done_in_interrupted_run' });
      else if (unfinished && uncertain && !options.reissueUncertain) plan.settled.push({ kind: 'failed', item, error: uncertainError(item, uncertain.at) });
      else plan.send.push(item);
    }
    if (unfinished) {
      const held = plan.settled.filter((outcome) => outcome.kind === 'failed').length;
      await createOutput(ctx).note(
        `Resuming the unfinished run of this batch from ${unfinished.entry.at}: ${plan.settled.length - held} of ${items.length} links already generated, ` +
          `${held} held back as uncertain, ${plan.send.length} to send (--restart generates every link again).`,
      );
    }
    plan.run = unfinished?.entry.run ?? (await ledger.startRun(digest, items.length, ctx.clock.now()));
    return runLinkBatch(session, ledger, plan, options);
  });
}

/** One link: a card on a terminal, the service's document with `--json`; a failure exits with its class code. */
async function generateSingle(session: Session, options: LoginLinkOptions, item: AccountItem): Promise<void> {
  const { ctx } = session;
  const response = await withLedger(ctx, options, (ledger) => generateLink(session, ledger, item, requestBody(options.request, item), {}));
  const out = createOutput(ctx);
  if (ctx.globals.json) return out.json(response.json);
  const { data: record } = response;
  const { format } = out;
  await out.card([
    {
      title: `Login link for account ${format.text(record.account_id)}`,
      rows: [
        ['Link', format.text(record.login_link)],
        ['User', format.text(record.user_email)],
        ['Expires', format.date(record.expires_at)],
        ['Purpose', format.text(record.purpose)],
        // Null, or left out by a service that does not send it: no row.
        ['Redirect', record.redirect_url == null ? undefined : format.text(record.redirect_url)],
        ['Email sent', typeof record.notification_sent === 'boolean' ? (record.notification_sent ? 'yes' : 'no') : undefined],
        ['Links replaced', record.previous_links_invalidated == null ? undefined : format.text(record.previous_links_invalidated)],
        ['Created', format.date(record.created_at)],
      ],
    },
  ]);
}

/** Reads and checks `--from` before anything is sent. */
function readItems(ctx: Context, from: string): Promise<AccountItem[]> {
  return readAccountInput(ctx, from, '--from', async () => (await ctx.settings()).baseUrl);
}

/** What makes two batches the same: service, flags and items (not where the items came from). */
function batchDigest(session: Session, options: LoginLinkOptions, items: AccountItem[]): string {
  const what = { origin: session.origin, request: options.request, items: items.map(({ origin: _line, ...fields }) => fields) };
  return createHash('sha256').update(JSON.stringify(what)).digest('hex');
}
