import type { Context } from '../../context';
import { ProtocolError } from '../../errors';
import { createOutput } from '../../output';
import { sanitizeLine } from '../../output/sanitize';
import { parseId } from '../parseFlags';
import type { RawInvocation } from '../types';

export interface GetDeliverableOptions {
  projectId: number;
  open: boolean;
}

export function parseOptions(raw: RawInvocation): GetDeliverableOptions {
  return { projectId: parseId(raw.args[0], '<project-id>'), open: raw.flags.open === true };
}

export async function run(ctx: Context, options: GetDeliverableOptions): Promise<void> {
  const out = createOutput(ctx);
  const api = await ctx.api();
  const response = await api.call('getProjectDeliverable', { params: { project_id: options.projectId } });
  const { data: deliverable } = response;
  if (ctx.globals.json) await out.json(response.json);
  else {
    const { format } = out;
    await out.card([
      {
        title: `Deliverable ${format.text(deliverable.deliverable_id)}: ${format.text(deliverable.title)}`,
        rows: [
          ['Project', format.text(deliverable.project_id)],
          ['Type', format.text(deliverable.type)],
          ['Status', format.status(deliverable.status)],
          ['Prepared', format.date(deliverable.prepared_date)],
          ['Document', format.text(deliverable.document_id)],
          ['View link', format.text(deliverable.view_link)],
          ['Link expires', format.date(deliverable.expires_at)],
          ['Summary', format.multiline(deliverable.summary)],
        ],
      },
    ]);
  }
  if (options.open) await ctx.openUrl(safeViewLink(deliverable.view_link ?? ''));
}

/** Only a web address goes to the browser launcher: a `file:` or `javascript:` link from a broken service must not. */
export function safeViewLink(viewLink: string): string {
  const url = URL.canParse(viewLink) ? new URL(viewLink) : undefined;
  if (url === undefined || (url.protocol !== 'https:' && url.protocol !== 'http:')) {
    throw new ProtocolError(`The deliverable's view link is not a web address, so it was not opened: ${sanitizeLine(viewLink)}`);
  }
  return url.href;
}
