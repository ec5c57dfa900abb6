import { DeliverableListQuery } from '../../contract/requests';
import type { TolerantItemOf, TolerantResponseOf } from '../../api/tolerant';
import type { DeliverableStatus, ProjectType } from '../../contract/resources';
import type { Context } from '../../types';
import { createOutput, dateColumn, freeText, label } from '../../output';
import { listMode, noteListSummary, parseMaxPages, printAllPages, printPage, type ListSpec } from '../../output/listing';
import { definedOnly, parseFlagFields } from '../parseFlags';
import type { RawInvocation } from '../types';
import { listDeliverables } from './register';

export interface ListDeliverablesOptions {
  query: { status?: DeliverableStatus; account_id?: number; project_type?: ProjectType; limit?: number; offset?: number };
  all: boolean;
  /** With `all`: the most pages to fetch (undefined: the client's default). */
  maxPages?: number;
  ndjson: boolean;
}

export function parseOptions(raw: RawInvocation): ListDeliverablesOptions {
  const { flags } = raw;
  const query = parseFlagFields(DeliverableListQuery, listDeliverables.flags!, flags);
  return { query: definedOnly(query), all: flags.all === true, ...definedOnly({ maxPages: parseMaxPages(flags.maxPages) }), ndjson: flags.ndjson === true };
}

const deliverableList: ListSpec<TolerantResponseOf<'listDeliverables'>, TolerantItemOf<'listDeliverables'>> = {
  key: 'deliverables',
  items: (data) => data.deliverables,
  head: [
    'ID',
    { title: 'Project', drop: 2 },
    { title: 'Account', drop: 1 },
    label('Type'),
    'Status',
    freeText('Title'),
    dateColumn('Prepared'),
  ],
  row: (deliverable, format) => [
    format.text(deliverable.id),
    format.text(deliverable.project_id),
    format.text(deliverable.account_id),
    format.text(deliverable.project_type),
    format.status(deliverable.status),
    format.text(deliverable.title),
    format.date(deliverable.prepared_date),
  ],
};

export function describeScope(query: ListDeliverablesOptions['query']): string {
  let scope = '';
  if (query.account_id !== undefined) scope += ` for account ${query.account_id}`;
  if (query.project_type !== undefined) scope += ` of type ${query.project_type}`;
  if (query.status !== undefined) scope += ` with status ${query.status}`;
  return scope;
}

export async function run(ctx: Context, options: ListDeliverablesOptions): Promise<void> {
  const out = createOutput(ctx);
  const mode = listMode(ctx.globals.json, options.ndjson);
  const api = await ctx.api();
  const input = { query: options.query };
  const summary = options.all
    ? await printAllPages(out, mode, deliverableList, api.pages('listDeliverables', input, { maxPages: options.maxPages }))
    : await printPage(out, mode, deliverableList, await api.call('listDeliverables', input));
  await noteListSummary(out, mode, summary, { noun: 'deliverables', scope: describeScope(options.query), offset: options.query.offset ?? 0 });
}
