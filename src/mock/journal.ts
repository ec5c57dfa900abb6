import { open, truncate, type FileHandle } from 'node:fs/promises';
import { crc32 } from 'node:zlib';
import { crashPoint } from '../lib/crashPoints';
import { appendToFile, writeFileAtomically } from '../lib/files';
import { KEY_FIELD, LIST_NAMES, type Changes, type ListName, type StateRecord } from './changes';
import type { MockState } from './state';

/**
 * The journal of a data directory (`DIR/state.journal`): the changes of each write since the last
 * snapshot (`src/mock/snapshot.ts`), one record per write, appended and flushed before the write is
 * acknowledged. A record is framed by its length and its CRC-32, so that a record a crash cut short
 * (the last one, and only the last one) is told from damage: it is dropped, never acknowledged;
 * a record that fails its check with whole records after it is damage, and the directory is refused.
 *
 * The first record names the snapshot generation the journal continues: a journal of an older
 * generation (a crash between a new snapshot and its new journal) holds nothing the snapshot lacks.
 */

export const JOURNAL_FILE = 'state.journal';
const JOURNAL_FORMAT = 'taxprep-mock-journal';
const JOURNAL_VERSION = 1;
// Length, CRC-32 of the payload, CRC-32 of those 8 bytes: a length damaged in place is not taken for a record cut short.
const HEADER_BYTES = 12;

/** The journal cannot be read as it is: `what` says why (the caller names the file and the way out). */
export class JournalDamage extends Error {}

function frame(payload: string): Buffer {
  const body = Buffer.from(payload, 'utf8');
  const record = Buffer.allocUnsafe(HEADER_BYTES + body.length);
  record.writeUInt32LE(body.length, 0);
  record.writeUInt32LE(crc32(body), 4);
  record.writeUInt32LE(crc32(record.subarray(0, 8)), 8);
  body.copy(record, HEADER_BYTES);
  return record;
}

const allZero = (bytes: Buffer) => bytes.every((byte) => byte === 0);

/**
 * The payloads of the whole records of `bytes`, and the length they span: what follows them is
 * the torn last record of a crash (cut short, or its bytes not all on the disk: zeros, or a payload
 * that fails its check with nothing after it). Throws `JournalDamage` for anything else that fails.
 */
export function unframe(bytes: Buffer): { payloads: string[]; length: number } {
  const payloads: string[] = [];
  let offset = 0;
  while (offset < bytes.length) {
    const rest = bytes.subarray(offset);
    if (rest.length < HEADER_BYTES || allZero(rest)) break;
    if (crc32(rest.subarray(0, 8)) !== rest.readUInt32LE(8)) throw new JournalDamage(`a damaged record header at byte ${offset}`);
    const size = rest.readUInt32LE(0);
    const end = HEADER_BYTES + size;
    if (end > rest.length) break;
    const body = rest.subarray(HEADER_BYTES, end);
    if (size === 0 || crc32(body) !== rest.readUInt32LE(4)) {
      if (end === rest.length) break;
      throw new JournalDamage(`a damaged record at byte ${offset}, before the last one`);
    }
    payloads.push(body.toString('utf8'));
    offset += end;
  }
  return { payloads, length: offset };
}

/** Writes a new journal for snapshot `generation` (atomically: the previous one stays until it is complete); resolves to its length. */
export async function startJournal(path: string, generation: number): Promise<number> {
  const header = frame(JSON.stringify({ format: JOURNAL_FORMAT, version: JOURNAL_VERSION, generation }));
  await writeFileAtomically(path, header, { durable: true });
  return header.length;
}

/**
 * Reads the journal and applies its records to `state` (the snapshot of `generation`). Returns
 * false when the journal belongs to an older snapshot (nothing applied). A torn last record is cut
 * off the file, so that the next record is appended after whole ones.
 */
export async function replayJournal(path: string, state: MockState, generation: number): Promise<{ current: boolean; bytes: number }> {
  const file = await open(path, 'r');
  let bytes: Buffer;
  try {
    bytes = await file.readFile();
  } finally {
    await file.close();
  }
  const { payloads, length } = unframe(bytes);
  const [header, ...entries] = payloads.map((payload) => parsed(payload));
  const head = (header ?? {}) as { format?: unknown; version?: unknown; generation?: unknown };
  if (head.format !== JOURNAL_FORMAT) throw new JournalDamage('not a journal of the taxprep mock');
  if (head.version !== JOURNAL_VERSION) throw new JournalDamage(`written by another version of the mock (journal format ${String(head.version)}, this one reads ${JOURNAL_VERSION})`);
  if (head.generation !== generation) {
    if (typeof head.generation === 'number' && head.generation < generation) return { current: false, bytes: 0 };
    throw new JournalDamage(`it continues snapshot ${String(head.generation)}, not the snapshot beside it (${generation})`);
  }
  const lookups = new Map<ListName, Map<unknown, number>>();
  entries.forEach((entry, index) => applyEntry(state, entry, lookups, index + 1));
  if (length < bytes.length) {
    await truncate(path, length);
    const handle = await open(path, 'r+');
    await handle.datasync().finally(() => handle.close());
  }
  return { current: true, bytes: length };
}

function parsed(payload: string): unknown {
  try {
    return JSON.parse(payload);
  } catch {
    throw new JournalDamage('a record that is not valid JSON');
  }
}

const isRecordList = (value: unknown): value is StateRecord[] => Array.isArray(value) && value.every((record) => typeof record === 'object' && record !== null && !Array.isArray(record));

function applyEntry(state: MockState, entry: unknown, lookups: Map<ListName, Map<unknown, number>>, index: number): void {
  const damaged = (what: string) => new JournalDamage(`record ${index}: ${what}`);
  const { scalars, lists } = (entry ?? {}) as Partial<Changes>;
  if (typeof scalars !== 'object' || scalars === null || typeof lists !== 'object' || lists === null) throw damaged('not a change of the state');
  const root = state as unknown as Record<ListName, StateRecord[]>;
  for (const [name, change] of Object.entries(lists)) {
    if (!(LIST_NAMES as string[]).includes(name)) throw damaged(`an unknown list ${JSON.stringify(name)}`);
    const list = name as ListName;
    if ('whole' in change) {
      if (!isRecordList(change.whole)) throw damaged(`the list ${name} is not a list of records`);
      root[list] = change.whole;
      lookups.delete(list);
      continue;
    }
    if (!isRecordList(change.appended) || !isRecordList(change.changed)) throw damaged(`the changes of ${name} are not lists of records`);
    const records = root[list];
    const lookup = lookups.get(list);
    for (const record of change.appended) {
      lookup?.set(record[KEY_FIELD[list]], records.length);
      records.push(record);
    }
    for (const record of change.changed) {
      const at = keyedLookup(lookups, list, records).get(record[KEY_FIELD[list]]);
      // A record changed after it was removed (an outstanding item held by a request): nothing to change.
      if (at !== undefined) records[at] = record;
    }
  }
  Object.assign(state, scalars);
  if (!('simulation' in scalars)) delete state.simulation;
}

/** Positions by key, made for a list the first time a record of it changed: most lists only grow. */
function keyedLookup(lookups: Map<ListName, Map<unknown, number>>, list: ListName, records: StateRecord[]): Map<unknown, number> {
  let lookup = lookups.get(list);
  if (!lookup) {
    lookup = new Map(records.map((record, position) => [record[KEY_FIELD[list]], position]));
    lookups.set(list, lookup);
  }
  return lookup;
}

/** The journal open for appending: one record per write, flushed before the write is acknowledged. */
export interface JournalWriter {
  /** Bytes in the journal, its header included. */
  readonly bytes: number;
  append(changes: Changes): Promise<void>;
  close(): Promise<void>;
}

/**
 * Opens the journal at `path` (whole records, `bytes` of them) for appending. An append that fails
 * (a full disk) cuts the file back to its whole records; when even that fails the journal is
 * `broken` and the caller writes a snapshot and a new journal instead.
 */
export async function openJournal(path: string, bytes: number): Promise<JournalWriter & { readonly broken: boolean }> {
  const file: FileHandle = await open(path, 'a', 0o600);
  let length = bytes;
  let broken = false;
  return {
    get bytes() {
      return length;
    },
    get broken() {
      return broken;
    },
    async append(changes) {
      if (broken) throw new Error('the journal could not be cut back after a failed write');
      const record = frame(JSON.stringify(changes));
      crashPoint('mock.before-commit');
      try {
        await appendToFile(file, record, { durable: true });
      } catch (error) {
        await file.truncate(length).catch(() => {
          broken = true;
        });
        throw error;
      }
      length += record.length;
      crashPoint('mock.after-commit');
    },
    close: () => file.close(),
  };
}
