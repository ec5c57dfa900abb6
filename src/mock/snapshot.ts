import { createReadStream } from 'node:fs';
import * as z from 'zod';
import { linesInChunks, stageFileAtomically, type StagedFile } from '../lib/files';
import { LIST_NAMES, scalarsOf, type ListName, type StateRecord } from './changes';
import type { IdKind, MockState } from './state';

/**
 * The snapshot of a data directory (`DIR/state.snapshot`): the whole state at one moment, which the
 * journal (`src/mock/journal.ts`) continues. Written to a temporary file, flushed and renamed (and
 * the directory flushed), so that a crash leaves the previous snapshot or the new one.
 *
 * A line per batch of records, not one JSON document: reading it streams, a line at a time, and
 * never holds the file or a second copy of the state whole (a state of a million documents is
 * hundreds of megabytes of JSON). A batch names its records' fields once and gives each record as
 * the list of its values: the file is about 40% smaller and read twice as fast as records with
 * their field names. The first line is the header: the generation (the journal names it), the
 * scalars, and how many records each list has, checked at the end.
 */

export const SNAPSHOT_FILE = 'state.snapshot';
const SNAPSHOT_FORMAT = 'taxprep-mock-snapshot';
const SNAPSHOT_VERSION = 1;
const RECORDS_PER_LINE = 1000;
const SNAPSHOT_CHUNK_BYTES = 1 << 20;

// A record, so that adding a kind of id to the state without adding it here fails to compile.
export const ID_KINDS = Object.keys({
  partner: true,
  account: true,
  user: true,
  loginLink: true,
  document: true,
  project: true,
  outstandingItem: true,
  deliverable: true,
  email: true,
} satisfies Record<IdKind, true>) as IdKind[];

/** The state's fields that are not lists of records, as the state file and the snapshot hold them. */
export const ScalarsSchema = z.object({
  nextIds: z.object(Object.fromEntries(ID_KINDS.map((kind) => [kind, z.number().int().positive()])) as Record<IdKind, z.ZodNumber>),
  clockOffsetMs: z.number().finite().nonnegative(),
  signingSecret: z.string().min(16),
  simulation: z
    .object({
      seed: z.number().int().nonnegative(),
      started_at_ms: z.number().finite(),
      steps_done: z.number().int().nonnegative(),
      documents_seen: z.number().int().nonnegative(),
    })
    .optional(),
});

const HeaderSchema = z.object({
  format: z.literal(SNAPSHOT_FORMAT),
  version: z.literal(SNAPSHOT_VERSION),
  generation: z.number().int().positive(),
  scalars: ScalarsSchema,
  counts: z.object(Object.fromEntries(LIST_NAMES.map((name) => [name, z.number().int().nonnegative()])) as Record<ListName, z.ZodNumber>),
});

/** The snapshot cannot be read as it is: the message says why (the caller names the file and the way out). */
export class SnapshotDamage extends Error {}

/** The snapshot's lines for `state`, made at once, so that they are one moment of a state that keeps changing. */
export function snapshotLines(state: MockState, generation: number): string[] {
  const lists = state as unknown as Record<ListName, readonly StateRecord[]>;
  const counts = Object.fromEntries(LIST_NAMES.map((name) => [name, lists[name].length]));
  const lines = [`${JSON.stringify({ format: SNAPSHOT_FORMAT, version: SNAPSHOT_VERSION, generation, scalars: scalarsOf(state), counts })}\n`];
  for (const name of LIST_NAMES) {
    const records = lists[name];
    for (let start = 0; start < records.length; start += RECORDS_PER_LINE) {
      lines.push(`${JSON.stringify([name, rowsOf(records.slice(start, start + RECORDS_PER_LINE))])}\n`);
    }
  }
  return lines;
}

/** Records as runs of `[fields, rows]`: records with the same fields (in the same order) share a run. */
function rowsOf(records: readonly StateRecord[]): Array<[string[], unknown[][]]> {
  const runs: Array<[string[], unknown[][]]> = [];
  let signature: string | undefined;
  for (const record of records) {
    const fields = Object.keys(record);
    const own = fields.join(',');
    if (own !== signature) {
      runs.push([fields, []]);
      signature = own;
    }
    const run = runs[runs.length - 1]!;
    run[1].push(run[0].map((field) => record[field]));
  }
  return runs;
}

/** Writes the snapshot's lines beside the current one, flushed; `commit` puts it in place. */
export async function stageSnapshot(path: string, lines: readonly string[]): Promise<StagedFile> {
  return stageFileAtomically(path, linesInChunks(lines, SNAPSHOT_CHUNK_BYTES), { durable: true });
}


const PLAIN_FIELD = /^[A-Za-z_][A-Za-z0-9_]*$/;
const recordMakers = new Map<string, (row: readonly unknown[]) => StateRecord>();

/**
 * A function that makes the record of a row with `fields`, one per set of fields: an object literal
 * with every field, so that V8 lays each record out with its fields inside the object, in one
 * allocation. Assigning the fields one by one to `{}` gave each record a second, growing block for
 * the fields beyond the first four: at a million documents that was most of the reading's time and
 * of the garbage collector's. A field's name must be a plain identifier (every field of the state
 * is), and not `__proto__`, which a literal would take as the prototype: a snapshot that says
 * otherwise is damaged.
 */
function recordMaker(fields: readonly string[]): (row: readonly unknown[]) => StateRecord {
  const signature = JSON.stringify(fields);
  let make = recordMakers.get(signature);
  if (!make) {
    const odd = fields.find((field) => !PLAIN_FIELD.test(field) || field === '__proto__');
    if (odd !== undefined) throw new SnapshotDamage(`it names a field ${JSON.stringify(odd)}, which no record has`);
    // eslint-disable-next-line no-new-func -- see above: a literal of known shape, from JSON-quoted names
    make = new Function('row', `return {${fields.map((field, index) => `${JSON.stringify(field)}: row[${index}]`).join(', ')}};`) as (row: readonly unknown[]) => StateRecord;
    recordMakers.set(signature, make);
  }
  return make;
}

/** The state and generation of the snapshot at `path`; throws `SnapshotDamage` when it is not a whole snapshot. */
export async function readSnapshot(path: string): Promise<{ state: MockState; generation: number }> {
  let header: z.infer<typeof HeaderSchema> | undefined;
  const lists = Object.fromEntries(LIST_NAMES.map((name) => [name, [] as StateRecord[]])) as Record<ListName, StateRecord[]>;
  let lineNumber = 0;
  const takeLine = (line: string) => {
    lineNumber += 1;
    let json: unknown;
    try {
      json = JSON.parse(line);
    } catch {
      throw new SnapshotDamage(`line ${lineNumber} is not valid JSON`);
    }
    if (!header) {
      if ((json as { format?: unknown } | null)?.format !== SNAPSHOT_FORMAT) throw new SnapshotDamage('not a snapshot of the taxprep mock');
      const version = (json as { version?: unknown }).version;
      if (version !== SNAPSHOT_VERSION) throw new SnapshotDamage(`written by another version of the mock (snapshot format ${String(version)}, this one reads ${SNAPSHOT_VERSION})`);
      const parsed = HeaderSchema.safeParse(json);
      if (!parsed.success) throw new SnapshotDamage(`a damaged header (${parsed.error.issues[0]?.path.join('.') ?? ''}: ${parsed.error.issues[0]?.message ?? ''})`);
      header = parsed.data;
      return;
    }
    const [name, runs] = Array.isArray(json) ? (json as unknown[]) : [];
    if (typeof name !== 'string' || !Object.hasOwn(lists, name) || !Array.isArray(runs)) throw new SnapshotDamage(`line ${lineNumber} is not a batch of records`);
    const list = lists[name as ListName];
    for (const run of runs as unknown[]) {
      const [fields, rows] = Array.isArray(run) ? (run as unknown[]) : [];
      if (!Array.isArray(fields) || !fields.every((field) => typeof field === 'string') || !Array.isArray(rows)) throw new SnapshotDamage(`line ${lineNumber} holds something other than records`);
      const recordOf = recordMaker(fields as string[]);
      for (const row of rows as unknown[]) {
        if (!Array.isArray(row) || row.length !== fields.length) throw new SnapshotDamage(`line ${lineNumber} holds something other than records`);
        list.push(recordOf(row));
      }
    }
  };
  let rest = '';
  for await (const chunk of createReadStream(path, { encoding: 'utf8', highWaterMark: 1 << 20 }) as AsyncIterable<string>) {
    let start = 0;
    for (let end = chunk.indexOf('\n'); end >= 0; start = end + 1, end = chunk.indexOf('\n', start)) {
      takeLine(rest + chunk.slice(start, end));
      rest = '';
    }
    rest += chunk.slice(start);
  }
  if (rest !== '') throw new SnapshotDamage('its last line is cut short');
  if (!header) throw new SnapshotDamage('it is empty');
  for (const name of LIST_NAMES) {
    if (lists[name].length !== header.counts[name]) throw new SnapshotDamage(`it holds ${lists[name].length} ${name} where its header says ${header.counts[name]}`);
  }
  const state = { ...lists, ...header.scalars } as unknown as MockState;
  return { state, generation: header.generation };
}
