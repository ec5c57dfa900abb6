import { ProjectListQuery } from '../../contract/requests';
import type { TolerantItemOf, TolerantResponseOf } from '../../api/tolerant';
import type { ProjectStatus, ProjectType } from '../../contract/resources';
import type { Context } from '../../types';
import { createOutput, dateColumn, label, progressColumn } from '../../output';
import { noteListSummary, printPage, type ListSpec } from '../../output/listing';
import { definedOnly, parseFlagFields, parseId } from '../parseFlags';
import type { RawInvocation } from '../types';
import { listProjects } from './register';

export interface ListProjectsOptions {
  accountId: number;
  query: { tax_year?: number; type?: ProjectType; status?: ProjectStatus };
}

export function parseOptions(raw: RawInvocation): ListProjectsOptions {
  const query = parseFlagFields(ProjectListQuery, listProjects.flags!, raw.flags);
  return { accountId: parseId(raw.args[0], '<account-id>'), query: definedOnly(query) };
}

const projectList: ListSpec<TolerantResponseOf<'listProjects'>, TolerantItemOf<'listProjects'>> = {
  key: 'projects',
  items: (data) => data.projects,
  head: ['ID', label('Type'), 'Tax year', 'Status', progressColumn('Progress'), dateColumn('Est. completion', { drop: 1 })],
  row: (project, format) => [
    format.text(project.id),
    format.text(project.type),
    format.text(project.tax_year),
    format.status(project.status),
    format.progress(project.progress_percentage),
    format.date(project.estimated_completion),
  ],
};

/** "for account 1001 in 2024 of type tax_return with status in_review": the filters, in words. */
export function describeScope(accountId: number, query: ListProjectsOptions['query']): string {
  let scope = ` for account ${accountId}`;
  if (query.tax_year !== undefined) scope += ` in ${query.tax_year}`;
  if (query.type !== undefined) scope += ` of type ${query.type}`;
  if (query.status !== undefined) scope += ` with status ${query.status}`;
  return scope;
}

export async function run(ctx: Context, options: ListProjectsOptions): Promise<void> {
  const out = createOutput(ctx);
  const mode = ctx.globals.json ? 'json' : 'table';
  const api = await ctx.api();
  const response = await api.call('listProjects', { params: { account_id: options.accountId }, query: options.query });
  const summary = await printPage(out, mode, projectList, response);
  await noteListSummary(out, mode, summary, { noun: 'projects', scope: describeScope(options.accountId, options.query), offset: 0 });
}
