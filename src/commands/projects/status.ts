import type { Context } from '../../types';
import { EXIT } from '../../errors';
import { bareNumberNote, formatDuration, parseDuration } from '../../lib/duration';
import { applyObservations, emptySnapshot, type Snapshot } from '../../follow/changes';
import { observeStatus } from '../../follow/pass';
import { printChanges } from '../../follow/print';
import { createOutput, dateColumn, label, wrapped, type Output } from '../../output';
import { writeText } from '../../output/write';
import { flagConflict, parseId } from '../parseFlags';
import type { RawInvocation } from '../types';
import { DEFAULT_WATCH_INTERVAL, MIN_WATCH_INTERVAL } from './register';
import type { TolerantResponseOf } from '../../api/tolerant';

export interface ProjectStatusOptions {
  projectId: number;
  /** Present with `--watch`. */
  watch?: { intervalMs: number; timeoutMs: number | undefined; exitStatus: boolean };
}

const MIN_INTERVAL_MS = parseDuration(MIN_WATCH_INTERVAL)!;

function durationFlag(value: unknown, flag: string, minimumMs: number, rule: string): number {
  const ms = typeof value === 'string' ? parseDuration(value) : undefined;
  if (ms === undefined || ms < minimumMs) throw flagConflict(`${flag} must be ${rule} (got ${JSON.stringify(String(value))})${typeof value === 'string' ? bareNumberNote(value) : ''}`);
  return ms;
}

export function parseOptions(raw: RawInvocation): ProjectStatusOptions {
  const projectId = parseId(raw.args[0], '<project-id>');
  const { flags } = raw;
  if (flags.watch !== true) {
    for (const flag of ['interval', 'exitStatus'] as const) {
      if (flags[flag] !== undefined) throw flagConflict(`--${flag === 'exitStatus' ? 'exit-status' : flag} needs --watch`);
    }
    return { projectId };
  }
  const intervalMs = durationFlag(flags.interval ?? DEFAULT_WATCH_INTERVAL, '--interval', MIN_INTERVAL_MS, `a duration of at least ${MIN_WATCH_INTERVAL} (one request a look keeps within a budget of 20 a minute)`);
  const timeoutMs = flags.timeout === undefined ? undefined : durationFlag(flags.timeout, '--timeout', 1, 'a duration such as 30s, 10m or 2h');
  return { projectId, watch: { intervalMs, timeoutMs, exitStatus: flags.exitStatus === true } };
}

type ProjectStatus = TolerantResponseOf<'getProjectStatus'>;

export async function run(ctx: Context, options: ProjectStatusOptions): Promise<number> {
  const out = createOutput(ctx);
  const api = await ctx.api();
  if (options.watch === undefined) {
    const response = await api.call('getProjectStatus', { params: { project_id: options.projectId } });
    if (ctx.globals.json) await out.json(response.json);
    else await printProject(out, response.data);
    return EXIT.OK;
  }
  return watchProject(ctx, out, options.projectId, options.watch);
}

/**
 * `--watch`: one look every interval until the project is `completed`. On a terminal the card is
 * redrawn; in a pipe each change is a line (NDJSON with --json), as `taxprep watch` prints them.
 * The deadline (`--timeout`) and Ctrl-C abort a look in flight.
 */
async function watchProject(ctx: Context, out: Output, projectId: number, watch: NonNullable<ProjectStatusOptions['watch']>): Promise<number> {
  const api = await ctx.api();
  const interrupted = ctx.interrupted();
  const deadline = new AbortController();
  const signal = AbortSignal.any([interrupted, deadline.signal]);
  const startedMs = ctx.clock.now().getTime();
  const endMs = watch.timeoutMs === undefined ? Number.POSITIVE_INFINITY : startedMs + watch.timeoutMs;
  const redraw = out.forPeople && !ctx.globals.json;
  let snapshot: Snapshot = emptySnapshot();
  let first = true;

  for (;;) {
    try {
      const remainingMs = endMs - ctx.clock.now().getTime();
      if (remainingMs <= 0) break;
      const timer = Number.isFinite(remainingMs) ? setTimeout(() => deadline.abort(new Error('deadline')), remainingMs) : undefined;
      let project: ProjectStatus;
      try {
        project = (await api.call('getProjectStatus', { params: { project_id: projectId }, signal })).data;
      } finally {
        clearTimeout(timer);
      }
      const seenAt = ctx.clock.now().toISOString();
      const { after, changes } = applyObservations(snapshot, { deliverables: [], projectLists: [], projectStatuses: [observeStatus(projectId, project)] }, seenAt, { baseline: first });
      snapshot = after;
      first = false;
      if (redraw) {
        await writeText(ctx.io.stdout, '\u001b[H\u001b[2J');
        await printProject(out, project);
        await out.note(`\nLooked ${out.format.date(seenAt)}; every ${formatDuration(watch.intervalMs)} until completed${Number.isFinite(endMs) ? `, until ${out.format.date(new Date(endMs).toISOString())}` : ''}. Ctrl-C to stop.`);
      } else {
        await printChanges(out, ctx.globals.json, changes);
      }
      if (project.status === 'completed') return EXIT.OK;
      const waitMs = Math.min(watch.intervalMs, endMs - ctx.clock.now().getTime());
      if (waitMs > 0) await ctx.clock.sleep(waitMs, interrupted);
    } catch (error) {
      if (interrupted.aborted) {
        await out.note(`projects status --watch: stopped; project ${projectId} is not completed`);
        return EXIT.INTERRUPTED;
      }
      if (!deadline.signal.aborted) throw error;
      break;
    }
  }
  await out.note(`projects status --watch: ${formatDuration(endMs - startedMs)} passed and project ${projectId} is still ${snapshot.projects[projectId]?.status ?? 'not read'}`);
  // gh pr checks --watch's convention: 8 means "still pending" for --exit-status.
  return watch.exitStatus ? EXIT.STILL_PENDING : EXIT.OK;
}

async function printProject(out: Output, project: ProjectStatus): Promise<void> {
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
    [label('Type'), 'Priority', wrapped('Description'), dateColumn('Requested')],
    items.map((item) => [format.text(item.type), format.status(item.priority), format.text(item.description), format.date(item.requested_at)]),
    'Outstanding items',
  );
}
