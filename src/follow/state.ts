import { createHash } from 'node:crypto';
import { mkdir, readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import * as z from 'zod';
import { parseJsonDocument } from '../lib/jsonDocument';
import { UsageError } from '../errors';
import { stageFileAtomically, type StagedFile } from '../lib/files';
import { appDirectory } from '../lib/paths';
import { emptySnapshot, type Change, type Snapshot } from './changes';

/**
 * `taxprep watch`'s memory between runs: the last look at the work (a Snapshot), the times of the
 * requests of the last minute (so that the budget holds across cron runs too), and the accounts
 * already reported as unknown (reported once, not on every pass). One file per profile and base
 * URL, in the user's state directory, 0600, replaced atomically: a kill at any moment leaves the
 * previous look or the new one.
 */

export const STATE_FORMAT = 'taxprep-watch-state';
export const STATE_VERSION = 1;

export interface WatchState {
  base_url: string;
  profile: string | null;
  /** When the state was last written (ISO). */
  saved_at: string;
  snapshot: Snapshot;
  /** Send times (ISO) of the requests of the last minute, oldest first. */
  sent: string[];
  /** Accounts the service does not know (or are another partner's), with the code it gave. */
  unknown_accounts: Record<string, string>;
  /** The pass whose changes the webhook outbox holds as queued but not yet seen (src/hooks/watchHooks.ts): recorded by the same rename. */
  outbox_pass?: string;
}

const Id = z.string().regex(/^\d+$/);
const Nullable = <T extends z.ZodType>(schema: T) => schema.nullable();
const Item = z.object({ type: z.string(), description: z.string(), priority: z.string(), requested_at: Nullable(z.string()) });
const StateFile = z.object({
  format: z.literal(STATE_FORMAT),
  version: z.literal(STATE_VERSION),
  base_url: z.string(),
  profile: Nullable(z.string()),
  saved_at: z.string(),
  snapshot: z.object({
    deliverables_read_at: z.string().optional(),
    deliverable_pages_read_at: z.array(z.string()).optional(),
    deliverables: z.record(
      Id,
      z.object({ project_id: Nullable(z.number()), account_id: Nullable(z.number()), status: Nullable(z.string()), title: Nullable(z.string()), expires_at: Nullable(z.string()) }),
    ),
    projects: z.record(
      Id,
      z.object({
        account_id: Nullable(z.number()),
        status: Nullable(z.string()),
        progress_percentage: Nullable(z.number()),
        estimated_completion: Nullable(z.string()),
        items: z.record(z.string(), Item).optional(),
        checked_at: z.string().optional(),
      }),
    ),
    accounts: z.record(Id, z.object({ listed_at: z.string().optional() })),
  }),
  sent: z.array(z.string()),
  unknown_accounts: z.record(Id, z.string()),
  outbox_pass: z.string().optional(),
});

/** The default state file: `<state dir>/watch/<profile>-<digest of the base URL>.json`. */
export function defaultStatePath(env: Record<string, string | undefined>, profile: string | null, baseUrl: string): string {
  const digest = createHash('sha256').update(baseUrl).digest('hex').slice(0, 12);
  const name = (profile ?? 'no-profile').replace(/[^A-Za-z0-9_.-]/g, '_');
  return join(appDirectory('state', env), 'watch', `${name}-${digest}.json`);
}

export function freshState(baseUrl: string, profile: string | null, now: Date): WatchState {
  return { base_url: baseUrl, profile, saved_at: now.toISOString(), snapshot: emptySnapshot(), sent: [], unknown_accounts: {} };
}

function damaged(path: string, rule: string): UsageError {
  return new UsageError(`the watch state file ${path} is damaged: ${rule}; it was left as it is`, {
    details: { state: [rule], path },
    hint: 'Run again with --reset-state to start a new baseline (the next run then reports nothing), or --state FILE to use another file.',
  });
}

/**
 * The state in `path`, or undefined when there is none yet (the first run: a baseline). A file
 * that is not a state file of this version is refused (exit 2) and never overwritten, unless
 * `reset`: then it is ignored and replaced at the end of the run.
 */
export async function readState(path: string, expected: { baseUrl: string }, options: { reset: boolean }): Promise<WatchState | undefined> {
  if (options.reset) return undefined;
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as { code?: unknown }).code === 'ENOENT') return undefined;
    throw new UsageError(`cannot read the watch state file ${path}: ${(error as Error).message}`, { details: { state: ['cannot be read'], path } });
  }
  const state = parseStateDocument(text, (rule) => damaged(path, rule));
  if (state.base_url !== expected.baseUrl) {
    throw new UsageError(`the watch state file ${path} is for ${state.base_url}, not ${expected.baseUrl}; it was left as it is`, {
      details: { state: ['is for another base URL'], path },
      hint: 'Give each service its own --state FILE, or --reset-state to start a new baseline in this one.',
    });
  }
  return state;
}

/** A state document (a file's text, or the same JSON as a shared store keeps it) as a state; `damaged` makes the error for a rule it breaks. */
export function parseStateDocument(text: string, damaged: (rule: string) => Error): WatchState {
  const { format: _format, version: _version, ...state } = parseJsonDocument(text, StateFile, damaged);
  return state;
}

/** The state as its document: what a file holds, and what a shared store keeps. */
export function stateDocument(state: WatchState): string {
  return JSON.stringify({ format: STATE_FORMAT, version: STATE_VERSION, ...state });
}

/**
 * A pass as watch records it: the state after the pass, and the changes it found, in the order
 * they are printed, each exactly as `watch --json` prints it.
 */
export interface PassRecord {
  state: WatchState;
  changes: Change[];
}

/**
 * The one durable step that records a pass's changes as seen. The new state is written whole
 * beside its file (0600, in a directory of its own, 0700); watch prints the changes, then `commit`
 * puts it in place. A kill before the commit leaves the previous state, so the next run finds the
 * same changes again: none is lost, and a kill between the print and the commit repeats that
 * pass's changes once (at least once, never lost). Anything that must hold exactly the changes
 * recorded as seen belongs in this document, so that it is written by the same rename.
 */
export async function stagePass(path: string, record: PassRecord): Promise<StagedFile> {
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  return stageFileAtomically(path, `${stateDocument(record.state)}\n`, { durable: true });
}
