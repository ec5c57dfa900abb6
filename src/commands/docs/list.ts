import { DocumentListQuery } from '../../contract/requests';
import type { TolerantItemOf, TolerantResponseOf } from '../../api/tolerant';
import type { Context } from '../../types';
import { createOutput, dateColumn, fileName, freeText } from '../../output';
import { listMode, noteListSummary, parseMaxPages, printAllPages, printPage, type ListSpec } from '../../output/listing';
import { definedOnly, parseFlagFields, parseId } from '../parseFlags';
import type { RawInvocation } from '../types';
import { listDocuments } from './register';

export interface ListDocumentsOptions {
  accountId: number;
  query: { tax_year?: number; limit?: number; offset?: number };
  all: boolean;
  /** With `all`: the most pages to fetch (undefined: the client's default). */
  maxPages?: number;
  ndjson: boolean;
}

export function parseOptions(raw: RawInvocation): ListDocumentsOptions {
  const { flags } = raw;
  const query = parseFlagFields(DocumentListQuery, listDocuments.flags!, flags);
  return {
    accountId: parseId(raw.args[0], '<account-id>'),
    query: definedOnly(query),
    all: flags.all === true,
    ...definedOnly({ maxPages: parseMaxPages(flags.maxPages) }),
    ndjson: flags.ndjson === true,
  };
}

const documentList: ListSpec<TolerantResponseOf<'listDocuments'>, TolerantItemOf<'listDocuments'>> = {
  key: 'documents',
  items: (data) => data.documents,
  head: ['ID', fileName('Filename'), 'Tax year', freeText('Description'), dateColumn('Uploaded')],
  row: (document, format) => [
    format.text(document.id),
    format.text(document.filename),
    format.text(document.tax_year),
    format.text(document.description),
    format.date(document.uploaded_at),
  ],
};

/** `--all` reads from `--offset` on, `--limit` documents a request (docs/tour.md: "docs list"). */
export async function run(ctx: Context, options: ListDocumentsOptions): Promise<void> {
  const out = createOutput(ctx);
  const mode = listMode(ctx.globals.json, options.ndjson);
  const api = await ctx.api();
  const input = { params: { account_id: options.accountId }, query: options.query };
  const summary = options.all
    ? await printAllPages(out, mode, documentList, api.pages('listDocuments', input, { maxPages: options.maxPages }))
    : await printPage(out, mode, documentList, await api.call('listDocuments', input));
  const year = options.query.tax_year === undefined ? '' : ` in ${options.query.tax_year}`;
  await noteListSummary(out, mode, summary, {
    noun: 'documents',
    scope: ` for account ${options.accountId}${year}`,
    offset: options.query.offset ?? 0,
  });
}
