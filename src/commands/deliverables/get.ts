import type { ApiClient } from '../../api/types';
import type { Context } from '../../types';
import { ApiError, ProtocolError } from '../../errors';
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
  const response = await api.call('getProjectDeliverable', { params: { project_id: options.projectId } }).catch(async (error: unknown) => {
    throw await explainNotFound(api, options.projectId, error);
  });
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

/**
 * How many deliverables a not-found id is looked up among (pages of 100 of `GET /deliverables`,
 * newest first as the service lists them): the contract has no way to fetch one deliverable by
 * its id, and a mistaken id should cost a few requests, not a walk through every page.
 */
export const DELIVERABLE_LOOKUP_LIMIT = 500;
const LOOKUP_PAGE_SIZE = 100;

/**
 * `deliverables get` takes a project id, but `deliverables list` shows deliverable ids first, so
 * a project the service does not know is often a deliverable's id: say which project it belongs
 * to when it is among the first `DELIVERABLE_LOOKUP_LIMIT` deliverables, and that the command
 * takes a project id in any case. The service's code, details and exit code stay.
 */
async function explainNotFound(api: ApiClient, id: number, error: unknown): Promise<unknown> {
  if (!(error instanceof ApiError) || error.status !== 404 || error.code === 'DELIVERABLE_NOT_FOUND') return error;
  const project = await projectOfDeliverable(api, id).catch(() => undefined);
  const body = error.toBody();
  if (project === undefined) {
    return new ApiError(error.status, body, { hint: 'deliverables get takes a project id (the PROJECT column of `taxprep deliverables list`), not a deliverable id.' });
  }
  body.error.message = `${id} is a deliverable id, not a project id: deliverable ${id} belongs to project ${sanitizeLine(project)}. ${body.error.message}`;
  return new ApiError(error.status, body, { hint: `deliverables get takes a project id: run \`taxprep deliverables get ${sanitizeLine(project)}\`.` });
}

async function projectOfDeliverable(api: ApiClient, id: number): Promise<number | string | undefined> {
  for (let offset = 0; offset < DELIVERABLE_LOOKUP_LIMIT; offset += LOOKUP_PAGE_SIZE) {
    const { data } = await api.call('listDeliverables', { query: { limit: LOOKUP_PAGE_SIZE, offset } });
    const found = data.deliverables.find((deliverable) => String(deliverable.id) === String(id));
    if (found) return found.project_id ?? undefined;
    if (!data.has_more) return undefined;
  }
  return undefined;
}

/** Only a web address goes to the browser launcher: a `file:` or `javascript:` link from a broken service must not. */
export function safeViewLink(viewLink: string): string {
  const url = URL.canParse(viewLink) ? new URL(viewLink) : undefined;
  if (url === undefined || (url.protocol !== 'https:' && url.protocol !== 'http:')) {
    throw new ProtocolError(`The deliverable's view link is not a web address, so it was not opened: ${sanitizeLine(viewLink)}`);
  }
  return url.href;
}
