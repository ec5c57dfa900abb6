import { ledgerPlaceOf } from '../../state/backend';
import type { ApiClient, ApiResponse } from '../../api/types';
import { ApiError, EXIT, InterruptedError } from '../../errors';
import { formatDuration } from '../../lib/duration';
import { createOutput, dateColumn, freeText, label, wrapped, type Output } from '../../output';
import { csvRow } from '../../output/csv';
import { writeText } from '../../output/write';
import { addOrigin, countFrom, describeSources, gatherAccounts, type AccountSources } from '../../follow/accounts';
import { expiringLinks, sortByPriority } from '../../follow/attention';
import { numberOrNull, stringOrNull } from '../../follow/pass';
import { hookTroubles } from '../../hooks/attention';
import type { Context } from '../../types';
import { LOGIN_LINKS, readLedger } from '../../batch/ledgers/loginLinks';
import { RateLimitPacer } from '../../batch/pacer';
import { runPool } from '../../batch/pool';
import { renewalNow } from '../login-link/renewalNow';
import { parseWindow } from '../login-link/options';
import { flagConflict } from '../parseFlags';
import type { RawInvocation } from '../types';
import { DEFAULT_WITHIN } from './register';

export interface StatusOptions {
  accountsFile: string | undefined;
  ledgerPath: string | undefined;
  withinMs: number;
  csv: boolean;
}

export function parseOptions(raw: RawInvocation): StatusOptions {
  const { flags } = raw;
  return {
    accountsFile: typeof flags.accounts === 'string' ? flags.accounts : undefined,
    ledgerPath: typeof flags.ledger === 'string' ? flags.ledger : undefined,
    withinMs: parseWindow(flags.within ?? DEFAULT_WITHIN, '--within'),
    csv: flags.csv === true,
  };
}

/** Requests at a time: the key's pace is kept by the pacer whatever this is. */
const CONCURRENCY = 4;

interface ReadyDeliverable {
  deliverable_id: number;
  project_id: number | null;
  account_id: number | null;
  title: string | null;
  project_type: string | null;
  view_link_expires_at: string | null;
}

interface WaitingItem {
  account_id: number;
  project_id: number;
  type: string;
  description: string;
  priority: string;
  requested_at: string | null;
}

interface ExpiringLink {
  account_id: number;
  user_email: string;
  purpose: string;
  expires_at: string;
}

/** The one document of `status --json`. */
export interface StatusDocument {
  deliverables_ready: ReadyDeliverable[];
  /** Projects `waiting_on_client`: each open item a row; a project with none has `description` null. */
  waiting_on_client: Array<WaitingItem | (Omit<WaitingItem, 'type' | 'description' | 'priority' | 'requested_at'> & { type: null; description: null; priority: null; requested_at: null })>;
  login_links_expiring: ExpiringLink[];
  accounts: {
    looked_at: number;
    from_deliverables: number;
    from_file: number;
    from_ledgers: number;
    /** Accounts the service would not show (`ACCOUNT_NOT_FOUND`, `ACCESS_DENIED`): not covered. */
    not_covered: Array<{ account_id: number; code: string }>;
  };
  /** When each section read the service, oldest reading first (ISO; null when it read nothing); login links come from the local ledger. */
  read_at: { deliverables_ready: string | null; waiting_on_client: string | null };
  took_ms: number;
}

/**
 * `taxprep status`: what needs attention across the partner's clients, in one look. Every request
 * goes through the pacer, so a look over many accounts keeps to the key's rate limit.
 */
export async function run(ctx: Context, options: StatusOptions): Promise<number> {
  if (options.csv && ctx.globals.json) throw flagConflict('--csv and --json are two formats of the same output: give one');
  const started = ctx.clock.now().getTime();
  const settings = await ctx.settings();
  const api = await ctx.api();
  const ledgerPlace = await ledgerPlaceOf(LOGIN_LINKS, ctx, options);
  const sources = await gatherAccounts(ctx, { accountsFile: options.accountsFile, loginLinksLedger: options.ledgerPath, baseUrl: settings.baseUrl });
  const signal = ctx.interrupted();
  const pacer = new RateLimitPacer(ctx.clock);
  const paced = async <T>(call: () => Promise<ApiResponse<T>>): Promise<ApiResponse<T>> => {
    const sequence = await pacer.acquire(signal);
    try {
      const response = await call();
      pacer.record(sequence, response.headers);
      return response;
    } catch (error) {
      pacer.fail(sequence);
      throw error;
    }
  };

  // Ctrl-C: the reads stop, whatever they were throwing then, and nothing of a half-read status is printed.
  const stopped = (error?: unknown): never => {
    if (!signal.aborted) throw error;
    throw new InterruptedError('interrupted while reading the service; nothing was printed', { hint: 'Run taxprep status again.' });
  };
  const readAt = { deliverables_ready: ctx.clock.now().toISOString(), waiting_on_client: null as string | null };
  const ready = await readDeliverables(api, paced, sources, signal).catch(stopped);
  const waiting: StatusDocument['waiting_on_client'] = [];
  const notCovered: StatusDocument['accounts']['not_covered'] = [];
  const accounts = [...sources.origins.keys()].sort((a, b) => a - b);
  await runPool(accounts, CONCURRENCY, signal, async (account) => {
    try {
      const askedAt = ctx.clock.now().toISOString();
      const list = await paced(() => api.call('listProjects', { params: { account_id: account }, signal }));
      if (readAt.waiting_on_client === null || askedAt < readAt.waiting_on_client) readAt.waiting_on_client = askedAt;
      for (const project of list.data.projects.filter((candidate) => candidate.status === 'waiting_on_client')) {
        const projectId = numberOrNull(project.id);
        if (projectId === null) continue;
        const status = await paced(() => api.call('getProjectStatus', { params: { project_id: projectId }, signal }));
        const items = Array.isArray(status.data.outstanding_items) ? status.data.outstanding_items : [];
        if (items.length === 0) waiting.push({ account_id: account, project_id: projectId, type: null, description: null, priority: null, requested_at: null });
        for (const item of items) {
          waiting.push({ account_id: account, project_id: projectId, type: String(item.type ?? ''), description: String(item.description ?? ''), priority: String(item.priority ?? ''), requested_at: stringOrNull(item.requested_at) });
        }
      }
    } catch (error) {
      if (!(error instanceof ApiError) || (error.exitCode !== EXIT.NOT_FOUND && error.code !== 'ACCESS_DENIED')) throw error;
      notCovered.push({ account_id: account, code: error.code });
    }
  }).catch(stopped);
  if (signal.aborted) stopped();

  const origin = new URL(settings.baseUrl).origin;
  const ledger = await readLedger(ledgerPlace.lines);
  const links = expiringLinks(
    ledger.links().filter((entry) => entry.origin === origin).map((entry) => ({ account_id: entry.account_id, user_email: entry.link.user_email, purpose: entry.link.purpose, expires_at: entry.link.expires_at })),
    renewalNow(ctx),
    options.withinMs,
  );

  const document: StatusDocument = {
    deliverables_ready: ready,
    waiting_on_client: sortWaiting(waiting),
    login_links_expiring: links,
    accounts: {
      looked_at: sources.origins.size - notCovered.length,
      from_deliverables: countFrom(sources, 'deliverables'),
      from_file: countFrom(sources, 'file'),
      from_ledgers: countFrom(sources, 'ledger'),
      not_covered: notCovered.sort((a, b) => a.account_id - b.account_id),
    },
    read_at: readAt,
    took_ms: ctx.clock.now().getTime() - started,
  };
  const out = createOutput(ctx);
  const hooks = await hookTroubles(ctx);
  if (ctx.globals.json) await out.json({ ...document, hooks_needing_attention: hooks });
  else if (options.csv) await printCsv(ctx, document);
  else await printSections(out, document);
  if (!ctx.globals.json) await out.note(coverageLine(document, sources, options.accountsFile, ctx.clock.now()));
  if (!ctx.globals.json) for (const trouble of hooks) await out.note(`hooks: ${trouble.hook} (${trouble.target}) is ${trouble.problem}`);
  return EXIT.OK;
}

/** Every page of the deliverable list: completed ones are ready to send, and every one names an account. */
async function readDeliverables(
  api: ApiClient,
  paced: <T>(call: () => Promise<ApiResponse<T>>) => Promise<ApiResponse<T>>,
  sources: AccountSources,
  signal: AbortSignal,
): Promise<ReadyDeliverable[]> {
  const ready: ReadyDeliverable[] = [];
  for (let offset = 0; ; ) {
    const page = await paced(() => api.call('listDeliverables', { query: { limit: 100, offset }, signal }));
    const items = page.data.deliverables;
    for (const deliverable of items) {
      const accountId = numberOrNull(deliverable.account_id);
      if (accountId !== null) addOrigin(sources, accountId, 'deliverables');
      const id = numberOrNull(deliverable.id);
      if (deliverable.status !== 'completed' || id === null) continue;
      ready.push({
        deliverable_id: id,
        project_id: numberOrNull(deliverable.project_id),
        account_id: accountId,
        title: stringOrNull(deliverable.title),
        project_type: stringOrNull(deliverable.project_type),
        view_link_expires_at: stringOrNull(deliverable.expires_at),
      });
    }
    offset += items.length;
    if (items.length === 0 || page.data.has_more !== true) return ready;
  }
}

/** Highest priority and oldest first; projects without open items after the items. */
function sortWaiting(rows: StatusDocument['waiting_on_client']): StatusDocument['waiting_on_client'] {
  const withItems = rows.filter((row): row is WaitingItem => row.priority !== null);
  return [...sortByPriority(withItems), ...rows.filter((row) => row.priority === null).sort((a, b) => a.project_id - b.project_id)];
}

const SECTION_TITLES = { deliverables: 'Deliverables ready to send', waiting: 'Waiting on the client', links: 'Login links expiring' } as const;

/** A section a table: on a terminal under its title, fitted to the width; in a pipe tab-separated rows led by the section's name. */
async function printSections(out: Output, document: StatusDocument): Promise<void> {
  const { format } = out;
  const lead = (name: string) => (out.forPeople ? [] : [name]);
  const head = (columns: Parameters<Output['table']>[0]) => (out.forPeople ? columns : ['Section', ...columns]);
  const section = async (name: string, title: string, columns: Parameters<Output['table']>[0], rows: string[][]) => {
    if (rows.length === 0) {
      if (out.forPeople) await out.note(`${title}: none`);
      return;
    }
    await out.table(head(columns), rows.map((row) => [...lead(name), ...row]), title);
  };
  await section(
    'deliverable',
    SECTION_TITLES.deliverables,
    ['Deliverable', 'Project', 'Account', label('Type', { drop: 1 }), freeText('Title'), dateColumn('Link expires')],
    document.deliverables_ready.map((row) => [
      String(row.deliverable_id),
      format.text(row.project_id ?? '-'),
      format.text(row.account_id ?? '-'),
      format.text(row.project_type ?? '-'),
      format.text(row.title ?? ''),
      format.date(row.view_link_expires_at),
    ]),
  );
  await section(
    'waiting',
    SECTION_TITLES.waiting,
    ['Account', 'Project', 'Priority', label('Type', { drop: 1 }), wrapped('Outstanding item'), dateColumn('Requested')],
    document.waiting_on_client.map((row) => [
      String(row.account_id),
      String(row.project_id),
      row.priority === null ? '-' : format.status(row.priority),
      format.text(row.type ?? '-'),
      row.description === null ? 'no open items' : format.text(row.description),
      format.date(row.requested_at),
    ]),
  );
  await section(
    'login_link',
    SECTION_TITLES.links,
    ['Account', freeText('User'), label('Purpose'), dateColumn('Expires')],
    document.login_links_expiring.map((row) => [String(row.account_id), format.text(row.user_email), format.text(row.purpose), format.date(row.expires_at)]),
  );
}

const CSV_COLUMNS = ['section', 'account_id', 'project_id', 'deliverable_id', 'user_email', 'priority', 'type', 'text', 'at'];

/** One CSV for a spreadsheet: a row per line of every section, `at` the expiry or request time. */
async function printCsv(ctx: Context, document: StatusDocument): Promise<void> {
  const rows: unknown[][] = [CSV_COLUMNS];
  for (const row of document.deliverables_ready) rows.push(['deliverable', row.account_id, row.project_id, row.deliverable_id, null, null, row.project_type, row.title, row.view_link_expires_at]);
  for (const row of document.waiting_on_client) rows.push(['waiting', row.account_id, row.project_id, null, null, row.priority, row.type, row.description, row.requested_at]);
  for (const row of document.login_links_expiring) rows.push(['login_link', row.account_id, null, null, row.user_email, null, row.purpose, null, row.expires_at]);
  await writeText(ctx.io.stdout, rows.map(csvRow).join(''));
}

/**
 * `looked at 7 accounts (...) in 1.2s; not covered: 999999 (ACCOUNT_NOT_FOUND); read 3s ago at
 * the oldest (deliverables), ...`: what was read, and how old each section's oldest reading is.
 */
function coverageLine(document: StatusDocument, sources: AccountSources, accountsFile: string | undefined, now: Date): string {
  const missing = document.accounts.not_covered;
  const age = (at: string | null) => (at === null ? 'nothing to read' : `read ${formatDuration(Math.max(0, now.getTime() - Date.parse(at)))} ago`);
  return (
    `status: looked at ${document.accounts.looked_at} of ${describeSources(sources, accountsFile)} in ${formatDuration(document.took_ms)}` +
    (missing.length === 0 ? '' : `; not covered: ${missing.map((entry) => `${entry.account_id} (${entry.code})`).join(', ')}`) +
    `. Deliverables ${age(document.read_at.deliverables_ready)}, waiting projects ${age(document.read_at.waiting_on_client)} at the oldest, login links from the local ledger. ` +
    'Accounts in none of these places are not shown.'
  );
}
