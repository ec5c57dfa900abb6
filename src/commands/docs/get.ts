import type { Context } from '../../types';
import { createOutput } from '../../output';
import { parseId } from '../parseFlags';
import type { RawInvocation } from '../types';

export interface GetDocumentOptions {
  documentId: number;
}

export function parseOptions(raw: RawInvocation): GetDocumentOptions {
  return { documentId: parseId(raw.args[0], '<document-id>') };
}

export async function run(ctx: Context, options: GetDocumentOptions): Promise<void> {
  const out = createOutput(ctx);
  const api = await ctx.api();
  const response = await api.call('getDocument', { params: { document_id: options.documentId } });
  if (ctx.globals.json) return out.json(response.json);
  const { data: document } = response;
  const { format } = out;
  await out.card([
    {
      title: `Document ${format.text(document.id)}`,
      rows: [
        ['Filename', format.text(document.filename)],
        ['Account', format.text(document.account_id)],
        ['Tax year', format.text(document.tax_year)],
        ['Type', format.text(document.file_type)],
        ['Size', format.bytes(document.file_size)],
        ['Uploaded', format.date(document.uploaded_at)],
        ['Description', document.description === '' ? undefined : format.multiline(document.description)],
      ],
    },
  ]);
}
