import type { Context } from '../../types';
import { createOutput, dateColumn, freeText, label } from '../../output';
import { parseId } from '../parseFlags';
import type { RawInvocation } from '../types';

export interface ProjectStatusOptions {
  projectId: number;
}

export function parseOptions(raw: RawInvocation): ProjectStatusOptions {
  return { projectId: parseId(raw.args[0], '<project-id>') };
}

export async function run(ctx: Context, options: ProjectStatusOptions): Promise<void> {
  const out = createOutput(ctx);
  const api = await ctx.api();
  const response = await api.call('getProjectStatus', { params: { project_id: options.projectId } });
  if (ctx.globals.json) return out.json(response.json);
  const { data: project } = response;
  const { format } = out;
  const items = Array.isArray(project.outstanding_items) ? project.outstanding_items : [];
  await out.card([
    {
      title: `Project ${format.text(project.id)}`,
      rows: [
        ['Type', format.text(project.type)],
        ['Tax year', format.text(project.tax_year)],
        ['Account', format.text(project.account_id)],
        ['Status', format.status(project.status)],
        ['Progress', format.progress(project.progress_percentage)],
        ['Est. completion', format.date(project.estimated_completion)],
        ['Last updated', format.date(project.last_updated)],
        ['Outstanding', items.length === 0 ? 'nothing outstanding' : `${items.length} item${items.length === 1 ? '' : 's'}`],
      ],
    },
  ]);
  if (items.length === 0) return;
  await out.table(
    [label('Type'), 'Priority', freeText('Description'), dateColumn('Requested')],
    items.map((item) => [format.text(item.type), format.status(item.priority), format.text(item.description), format.date(item.requested_at)]),
    'Outstanding items',
  );
}
