import { readSync } from 'node:fs';
import { mkdir, open, truncate, type FileHandle } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Clock, Context } from '../types';
import { CliError, UsageError } from '../errors';
import { appDirectory } from '../lib/paths';
import { linesInChunks, writeFileAtomically } from '../lib/files';
import { acquireLedgerLock } from './lock';
import { heldWrite } from '../lib/heldWrites';

/**
 * A ledger is an append-only NDJSON log of what a batch command did, one file per job kind, so
 * that a `docs sync` never waits for a `login-link renew` (each file has its own lock). The store
 * below knows lines, durability, compaction and locking; what the lines mean is each kind's fold
 * (./ledgers/).
 */
export interface LedgerKind {
  /** Names the ledger in messages: `the accounts ledger /path is damaged at line 3`. */
  label: string;
  /** The file in the user's data directory unless `--ledger` says otherwise. */
  fileName: string;
  /** Entry `type`s a line may have; any other line is damage. */
  types: readonly string[];
  /** What moving a damaged file aside costs, said in the message. */
  damagedHint: string;
  /**
   * Fields the fold does not hold in memory (a webhook's body): an entry that has one is folded
   * without it and remembers where its line is, and `LedgerState.readBack` reads the line again
   * when the field is needed, so memory stays flat in the number of lines. The file stays the one
   * source of truth; compaction copies these fields from the old lines into the new file. The fold
   * must not change such an entry's string fields: reading back checks them against the line.
   */
  keptOnDisk?: readonly string[];
  /**
   * Per entry type, fields whose values repeat from line to line (an event name, the time of a
   * pass, a list of hook ids): the fold holds one copy of each distinct value instead of one per
   * line, for as long as it lives, so a field with a new value on most lines (the time of an
   * attempt) does not belong here. An array value is shared too, so the kind must replace it
   * rather than change it in place.
   */
  sharedValues?: Readonly<Record<string, readonly string[]>>;
  /**
   * How long lines nobody waits for (`wait: false`) may gather before they are written, for a kind
   * that appends them faster than the disk syncs (the outcomes of webhook deliveries): one
   * fdatasync for a few dozen rather than one every few, each a round trip through libuv's thread
   * pool. Absent: written at once, as waited lines are.
   */
  gatherMs?: number;
}

/** Where a complete line is in its file (bytes, the newline included). */
export interface LinePosition {
  offset: number;
  length: number;
}

/** Where a kind's ledger lives unless `--ledger` says otherwise: the user's data directory. */
export function defaultPathOf(kind: Pick<LedgerKind, 'fileName'>, env: Record<string, string | undefined>, platform: NodeJS.Platform = process.platform): string {
  return join(appDirectory('data', env, platform), kind.fileName);
}

/** `--ledger PATH` when given, else the kind's default. */
export function ledgerPathOf(kind: Pick<LedgerKind, 'fileName'>, ctx: Pick<Context, 'env'>, flags: { ledgerPath: string | undefined }): string {
  return flags.ledgerPath ?? defaultPathOf(kind, ctx.env);
}

/**
 * Where a ledger's lines are kept: the seam under the ledger kinds. A file (`fileLines`, the
 * default: today's behaviour) or a shared store (src/state/: PostgreSQL). The kinds' folds
 * (./ledgers/) stay the one source of what lines mean: every store hands back the entries it was
 * given, in the order they were appended, and an appended line is durable (an fdatasync, a
 * committed transaction) before its promise resolves.
 */
export interface LineStore {
  /** Names the ledger's place in messages: its path, or the store's URL (redacted) and namespace. */
  readonly where: string;
  /** The file the lines are in, when they are in one: fields `keptOnDisk` are read back from it. Elsewhere they stay in memory. */
  readonly file?: string;
  /** Hands each entry to `apply` in order; `completeLength` is where the next line goes (bytes of a file, lines of a table). */
  forEachLine<E extends { type: string }>(kind: LedgerKind, apply: (entry: E, position: LinePosition) => void): Promise<{ lines: number; completeLength: number }>;
  /** Opens the lines for appending, by the holder of the lock; compacts when most are superseded (see `LedgerAppender.open`). */
  openAppender(kind: LedgerKind, read: { lines: number; completeLength: number }, live: { count: number; lines: () => AsyncIterable<string> }): Promise<{ appender: LineAppender; compacted: boolean }>;
}

/** A ledger's lines open for appending (`LedgerAppender` for a file). Ends and positions are in the store's own unit. */
export interface LineAppender {
  appendLine(line: string, options?: { wait?: boolean }): { position: LinePosition; done: Promise<void> };
  holds(end: number): boolean;
  writtenTo(end: number): Promise<void>;
  close(): Promise<void>;
}

/** The ledger file at `path`: today's store, and the default. */
export function fileLines(path: string): LineStore {
  return {
    where: path,
    file: path,
    forEachLine: (kind, apply) => forEachLedgerLine(path, kind, apply),
    openAppender: (kind, read, live) => LedgerAppender.open(path, kind, read, live),
  };
}

/** A ledger given as a path is the file at that path (tests, `--ledger`); a store is itself. */
export function linesOf(source: LineStore | string): LineStore {
  return typeof source === 'string' ? fileLines(source) : source;
}

/**
 * A ledger's place: its lines and its lock. For a file, the lock file beside it; for a shared
 * store, a lock the store holds for as long as the run (src/state/). `withLedger` takes the lock,
 * then opens the lines.
 */
export interface LedgerPlace {
  readonly lines: LineStore;
  lock(options: { waitMs: number; clock: Clock; kind: LedgerKind }): Promise<{ release(): Promise<void> }>;
}

/** The ledger file at `path` and its lock file (`path.lock`). */
export function filePlace(path: string): LedgerPlace {
  return { lines: fileLines(path), lock: (options) => acquireLedgerLock(path, options) };
}

export interface LedgerLines<E> {
  entries: E[];
  /** Byte length of the complete lines read; anything after it is a line torn by a kill mid-write. */
  completeLength: number;
}

/** Reads a ledger's complete lines; a missing file is an empty ledger, an unknown line is damage. */
export async function readLedgerLines<E extends { type: string }>(path: string, kind: LedgerKind): Promise<LedgerLines<E>> {
  const entries: E[] = [];
  const { completeLength } = await forEachLedgerLine<E>(path, kind, (entry) => entries.push(entry));
  return { entries, completeLength };
}

/**
 * Reads a ledger line by line, handing each entry to `apply` as it is parsed, so that a large
 * ledger (a webhook outbox of 100,000 pending deliveries) is never held whole as text beside its
 * entries. Returns how many lines were read and the byte length of the complete ones.
 */
export async function forEachLedgerLine<E extends { type: string }>(path: string, kind: LedgerKind, apply: (entry: E, position: LinePosition) => void): Promise<{ lines: number; completeLength: number }> {
  let stream;
  try {
    const handle = await open(path, 'r');
    stream = handle.createReadStream();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { lines: 0, completeLength: 0 };
    throw error;
  }
  let lines = 0;
  let lineNumber = 0;
  let completeLength = 0;
  let rest: Buffer = Buffer.alloc(0);
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    let buffer = rest.length === 0 ? chunk : Buffer.concat([rest, chunk]);
    for (let end = buffer.indexOf(0x0a); end !== -1; end = buffer.indexOf(0x0a)) {
      const line = buffer.toString('utf8', 0, end);
      const position = { offset: completeLength, length: end + 1 };
      lineNumber += 1;
      completeLength += end + 1;
      if (line.trim() !== '') {
        apply(parseEntry<E>(line, lineNumber, path, kind), position);
        lines += 1;
      }
      buffer = buffer.subarray(end + 1);
    }
    rest = Buffer.from(buffer);
  }
  return { lines, completeLength };
}

function parseEntry<E>(line: string, lineNumber: number, path: string, kind: LedgerKind): E {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    value = undefined;
  }
  if (typeof value !== 'object' || value === null || !kind.types.includes((value as { type?: string }).type ?? '')) {
    throw new UsageError(`the ${kind.label} ledger ${path} is damaged at line ${lineNumber}`, {
      hint: `Move the file aside to start a new ledger (${kind.damagedHint}).`,
    });
  }
  return value as E;
}

/** What `append` of a line nobody waits for returns: one promise for all of them. */
const NOT_WAITED = Promise.resolve();

/** Compact when at least this many lines are superseded (and at least as many as are live). */
const COMPACT_MIN_DROPPED = 100;

/** A compacted ledger goes to the disk in chunks of this size. */
const COMPACTION_CHUNK_BYTES = 65_536;

/**
 * Where an appender's batches of lines go: written, then made durable. A file writes and
 * `fdatasync`s; a shared store's table inserts them in one committed statement (src/state/).
 */
export interface LineSink {
  write(text: string, lines: readonly string[]): Promise<void>;
  sync(): Promise<void>;
  close(): Promise<void>;
}

function fileSink(handle: FileHandle): LineSink {
  return { write: async (text) => void (await handle.write(text)), sync: () => handle.datasync(), close: () => handle.close() };
}

/**
 * A ledger opened for appending, by the holder of its lock: a file (`open`), or another store's
 * sink (`onto`). Appends are group-committed:
 * lines queued while a write is in flight go out together, each batch written whole and
 * `fdatasync`ed before the callers' promises resolve, so an intent is on disk before its request
 * is sent. Lines nobody waits for gather for the kind's `gatherMs`, if it has one, unless a waited
 * line, `writtenTo` or `close` takes them sooner.
 */
export class LedgerAppender implements LineAppender {
  /** Lines to write, in order; `waiter` settles the promise of a line someone waits for. */
  private queue: Array<{ line: string; waiter: { resolve: () => void; reject: (error: unknown) => void } | undefined }> = [];
  private flushing: Promise<void> | undefined;
  /** The timer that ends a gathering of lines nobody waits for. */
  private gathering: NodeJS.Timeout | undefined;
  /** A write that nobody waited for failed. */
  private failure: unknown;
  /** Where the next line queued will be in the file, and how much of the file is written. */
  private queuedEnd: number;
  private writtenEnd: number;

  private constructor(
    readonly path: string,
    private readonly kind: LedgerKind,
    private sink: LineSink | undefined,
    length: number,
  ) {
    this.queuedEnd = length;
    this.writtenEnd = length;
  }

  /** Appends to `sink` (lines of `length` bytes already there), named `where` in messages. */
  static onto(where: string, kind: LedgerKind, sink: LineSink, length: number): LedgerAppender {
    return new LedgerAppender(where, kind, sink, length);
  }

  /**
   * Opens `path` for appending after its `read.lines` lines were folded, `live.count` of them still
   * needed: rewrites it as `live.lines()` when most lines are superseded (`compacted`: the fold
   * should keep only those), else drops a torn last line. The new file's lines (one string each)
   * are written as they come, so a large ledger is never held whole as text.
   */
  static async open(
    path: string,
    kind: LedgerKind,
    read: { lines: number; completeLength: number },
    live: { count: number; lines: () => AsyncIterable<string> },
  ): Promise<{ appender: LedgerAppender; compacted: boolean }> {
    await mkdir(dirname(path), { recursive: true, mode: 0o700 });
    const dropped = read.lines - live.count;
    const compacted = dropped >= COMPACT_MIN_DROPPED && dropped >= live.count;
    let length = read.completeLength;
    if (compacted) {
      length = 0;
      await writeFileAtomically(
        path,
        linesInChunks(live.lines(), COMPACTION_CHUNK_BYTES, (bytes) => {
          length += bytes;
        }),
        { durable: true },
      );
    } else {
      // Drop a line torn by a kill mid-write, or the next append would be glued to it.
      await truncate(path, read.completeLength).catch((error: NodeJS.ErrnoException) => {
        if (error.code !== 'ENOENT') throw error;
      });
    }
    return { appender: new LedgerAppender(path, kind, fileSink(await open(path, 'a', 0o600)), length), compacted };
  }

  /**
   * Appends one entry; durable before it resolves. With `wait: false` it resolves at once and
   * goes out with the next flush (still in order), for a line whose loss a re-run repairs (an
   * outcome the service can be asked again); a failure to write it is thrown by `close`.
   */
  append(entry: unknown, options: { wait?: boolean } = {}): Promise<void> {
    return this.appendLine(`${JSON.stringify(entry)}\n`, options).done;
  }

  /** `append` of a line already serialized (ending in a newline), saying where in the file it goes. */
  appendLine(line: string, options: { wait?: boolean } = {}): { position: LinePosition; done: Promise<void> } {
    const position = { offset: this.queuedEnd, length: Buffer.byteLength(line) };
    this.queuedEnd += position.length;
    if (options.wait === false) {
      // No promise of its own (a webhook outcome comes with every answer): a failure to write it is kept for `close`.
      this.queue.push({ line, waiter: undefined });
      if (this.kind.gatherMs === undefined) this.flushNow();
      else this.gather();
      return { position, done: NOT_WAITED };
    }
    const done = new Promise<void>((resolve, reject) => {
      this.queue.push({ line, waiter: { resolve, reject } });
      this.flushNow();
    });
    return { position, done };
  }

  /** Whether the file holds everything up to `end` already. */
  holds(end: number): boolean {
    return this.writtenEnd >= end;
  }

  /** Resolves once the file holds everything up to `end` (a line queued with `wait: false` may not be written yet). */
  async writtenTo(end: number): Promise<void> {
    while (this.writtenEnd < end) {
      this.flushNow();
      if (this.flushing === undefined) break;
      await this.flushing;
    }
    if (this.writtenEnd < end) throw this.failure ?? new Error(`the ${this.kind.label} ledger ${this.path} was not written`);
  }

  async close(): Promise<void> {
    while (this.flushing !== undefined || this.queue.length > 0) {
      this.flushNow();
      await this.flushing;
    }
    await this.sink?.close();
    this.sink = undefined;
    if (this.failure !== undefined) throw this.failure;
  }

  /** Starts writing what is queued, now (a gathering included), unless a flush is running: it takes the queue next. */
  private flushNow(): void {
    clearTimeout(this.gathering);
    this.gathering = undefined;
    if (this.flushing === undefined && this.queue.length > 0) this.flushing = this.flush();
  }

  /** Lets lines nobody waits for gather, unless a flush is running or a gathering is already under way. */
  private gather(): void {
    if (this.flushing === undefined && this.gathering === undefined) this.gathering = setTimeout(() => this.flushNow(), this.kind.gatherMs);
  }

  /**
   * Writes batches until the queue is empty (or, for a kind that gathers, holds no waited line:
   * the rest gathers), and says so in the same tick as it stops: a `.finally` a microtask later
   * left a gap in which a line queued by a concurrent caller found a flush still marked running,
   * and waited for ever.
   */
  private async flush(): Promise<void> {
    // Nothing before `flushNow` has recorded this flush as running, or a flush that ended at once
    // (a closed file) would be recorded as running for ever; lines queued in this tick join the batch.
    await undefined;
    while (this.queue.length > 0) {
      const batch = this.queue.splice(0);
      try {
        if (!this.sink) throw new Error(`the ${this.kind.label} ledger ${this.path} is closed`);
        const lines = batch.map((item) => item.line);
        const text = lines.join('');
        await heldWrite();
        await this.sink.write(text, lines);
        this.writtenEnd += Buffer.byteLength(text);
        await this.sink.sync();
        for (const item of batch) item.waiter?.resolve();
      } catch (error) {
        for (const item of batch) {
          if (item.waiter === undefined) this.failure ??= error;
          else item.waiter.reject(error);
        }
      }
      if (this.kind.gatherMs !== undefined && !this.queue.some((item) => item.waiter !== undefined)) break;
    }
    this.flushing = undefined;
    if (this.queue.length > 0) this.gather();
  }
}

/**
 * Where an entry folded without its `keptOnDisk` fields has its line: symbols, which JSON never
 * writes, and two small integers rather than a position object (one object fewer per line).
 */
const LINE_OFFSET = Symbol('line offset');
const LINE_LENGTH = Symbol('line length');
type Placed = { [LINE_OFFSET]?: number; [LINE_LENGTH]?: number };

function positionOf(entry: object): LinePosition | undefined {
  const placed = entry as Placed;
  return placed[LINE_OFFSET] === undefined ? undefined : { offset: placed[LINE_OFFSET], length: placed[LINE_LENGTH]! };
}

function place(entry: object, position: LinePosition): void {
  (entry as Placed)[LINE_OFFSET] = position.offset;
  (entry as Placed)[LINE_LENGTH] = position.length;
}

/** How much of the file `readBack` reads at once: a line, and the next ones after it. */
const READ_AHEAD_BYTES = 65_536;

/** The line at `position` in `file`, read on its own. */
function lineAt(file: FileHandle, position: LinePosition): string {
  // From Node's shared pool (a line is a few hundred bytes), not a zeroed buffer of its own per read.
  const bytes = Buffer.allocUnsafe(position.length);
  const bytesRead = readSync(file.fd, bytes, 0, position.length, position.offset);
  return bytes.toString('utf8', 0, bytesRead);
}

/** Whether `line` is the line of `entry`: the fold's string fields (an id, a time) are as it was written. */
function sameStrings(entry: object, line: Record<string, unknown>): boolean {
  const fields = entry as Record<string, unknown>;
  for (const field in fields) if (typeof fields[field] === 'string' && line[field] !== fields[field]) return false;
  return true;
}

/**
 * What `folded` rebuilds an entry into: a class of its own, because V8 gives a class's instances
 * room inside the object for all the fields they get, where a `{}` has room for four and puts the
 * rest in a second object (32 bytes more for each of 100,000 outbox events).
 */
class FoldedEntry {}

/**
 * A ledger's content folded from its lines, by each kind (`apply`, `liveEntries`), and, for the
 * holder of its lock, appended to. Readers need no lock: lines are appended whole and the file is
 * replaced only by an atomic rename (compaction). `E` is an entry as folded, `W` as written: they
 * differ by the kind's `keptOnDisk` fields.
 */
export abstract class LedgerState<E extends { type: string }, W extends E = E> {
  /** Every line in order, for a kind whose `liveEntries` filters them (a kind may fold without it). */
  protected entries: E[] = [];
  /** Lines in the file when it was read, to tell whether compaction pays when it is opened for appending. */
  private lines = 0;
  private completeLength = 0;
  private appender: LineAppender | undefined;
  /** The file opened for `readBack`, once a field kept on disk is first needed; `opened` once it is. */
  private reader: Promise<FileHandle> | undefined;
  private opened: FileHandle | undefined;
  /** Bytes of `opened` read ahead by `readBack`, from `offset` (allocated at the first read back). */
  private readAhead: { bytes: Buffer; offset: number; end: number } | undefined;
  /** One copy of each distinct value of the kind's `sharedValues` fields (arrays by their JSON). */
  private readonly shared = new Map<string, unknown>();

  /** Where the lines are kept (`linesOf`): a file, or a shared store. */
  readonly store: LineStore;

  constructor(
    source: LineStore | string,
    private readonly kind: LedgerKind,
  ) {
    this.store = linesOf(source);
  }

  /** Names the ledger's place in messages: a path, or a shared store's redacted URL and namespace. */
  get where(): string {
    return this.store.where;
  }

  /** Folds one entry into the state (read or appended). */
  protected abstract apply(entry: E): void;
  /**
   * The entries still needed: what compaction keeps. Called twice when the file is compacted (once
   * to count them, once to write them), so that a large ledger's are never gathered in one array.
   */
  protected abstract liveEntries(): Iterable<E>;

  /** Reads the file into the state; a missing file is an empty ledger. */
  async read(): Promise<this> {
    const read = await this.store.forEachLine<W>(this.kind, (entry, position) => this.apply(this.folded(entry, position)));
    this.completeLength = read.completeLength;
    this.lines = read.lines;
    return this;
  }

  /** Opens the file for appending, by the holder of its lock (after `read`). */
  protected async openForAppend(): Promise<void> {
    let count = 0;
    for (const _entry of this.liveEntries()) count += 1;
    const read = { lines: this.lines, completeLength: this.completeLength };
    const { appender, compacted } = await this.store.openAppender(this.kind, read, { count, lines: () => this.rewrite(this.liveEntries()) });
    // Superseded entries leave memory as they left the file.
    if (compacted) this.entries = this.entries.length === 0 ? [] : [...this.liveEntries()];
    this.appender = appender;
  }

  /** Folds `entry` in and appends it; durable when it resolves (see `LedgerAppender.append` for `wait: false`). */
  protected append(entry: W, options: { wait?: boolean } = {}): Promise<void> {
    if (!this.appender) return Promise.reject(new Error(`the ${this.kind.label} ledger ${this.where} is closed`));
    const { position, done } = this.appender.appendLine(`${JSON.stringify(entry)}\n`, options);
    this.apply(this.folded(entry, position));
    return done;
  }

  /**
   * Appends entries read from another ledger of the same kind as they were written (their ids
   * and times kept): `taxprep state import` and `export`. Durable when it resolves.
   */
  async copyIn(entries: readonly W[]): Promise<void> {
    await Promise.all(entries.map((entry) => this.append(entry)));
  }

  /**
   * The entry as written, its `keptOnDisk` fields read again from its line. Only the holder of
   * the lock reads back: only it compacts, so only its positions are sure to name the right line.
   */
  protected readBack(entry: E): Promise<W> {
    const position = positionOf(entry);
    // The common case, a line on disk and the file open: read now, not after two awaits (a
    // suspended frame each, for every body a delivery sends).
    if (position !== undefined && this.opened !== undefined && this.appender?.holds(position.offset + position.length)) {
      try {
        return Promise.resolve(this.restored(entry, this.lineAhead(this.opened, position), position));
      } catch (error) {
        return Promise.reject(error);
      }
    }
    return this.readBackWritten(entry, position);
  }

  private async readBackWritten(entry: E, position: LinePosition | undefined): Promise<W> {
    if (position === undefined) return entry as W;
    if (!this.appender) throw new Error(`the ${this.kind.label} ledger ${this.where} is not open for writing`);
    await this.appender.writtenTo(position.offset + position.length);
    this.reader ??= open(this.store.file!, 'r');
    this.opened = await this.reader;
    return this.restored(entry, this.lineAhead(this.opened, position), position);
  }

  async close(): Promise<void> {
    const reader = this.reader;
    this.reader = undefined;
    this.opened = undefined;
    this.readAhead = undefined;
    await (await reader)?.close();
    await this.appender?.close();
    this.appender = undefined;
  }

  /** The entry as the fold keeps it: without the kind's `keptOnDisk` fields, and where its line is when it had one. */
  private folded(entry: W, position: LinePosition): E {
    // A shared store has no file to read them back from: it keeps them in memory.
    const onDisk = this.store.file === undefined ? [] : (this.kind.keptOnDisk ?? []);
    const sharedFields = this.kind.sharedValues?.[entry.type] ?? [];
    const fields = entry as unknown as Record<string, unknown>;
    if (!onDisk.some((field) => field in entry)) {
      // Nothing to leave out: the entry (a new object from the parser or the caller) keeps its own
      // object, each repeated value swapped for its shared copy.
      for (const field of sharedFields) if (field in fields) fields[field] = this.sharedValue(fields[field]);
      return entry;
    }
    // A new object rather than `delete`, which would leave every entry in V8's slower, larger dictionary form.
    const kept = new FoldedEntry() as Record<string, unknown>;
    // `for...in`, not Object.entries: no array per field for every line read or appended.
    for (const field in fields) {
      if (onDisk.includes(field)) continue;
      kept[field] = sharedFields.includes(field) ? this.sharedValue(fields[field]) : fields[field];
    }
    place(kept, position);
    return kept as unknown as E;
  }

  private sharedValue(value: unknown): unknown {
    const key = typeof value === 'string' ? value : JSON.stringify(value);
    const known = this.shared.get(key);
    if (known !== undefined) return known;
    this.shared.set(key, value);
    return value;
  }

  /**
   * The line at `position` of the file open for `readBack`, from the bytes read ahead when they
   * hold it, else from a new read of READ_AHEAD_BYTES from there: lines are mostly read back in
   * the order of the file (deliveries as they were queued), so one read serves the next few
   * dozen. Every byte read stays valid: a ledger's file is only appended to while it is open (a
   * compaction replaces it before), and a read ends where the file did.
   */
  private lineAhead(file: FileHandle, position: LinePosition): string {
    const end = position.offset + position.length;
    let ahead = this.readAhead;
    if (ahead === undefined || position.offset < ahead.offset || end > ahead.end) {
      if (position.length > READ_AHEAD_BYTES) return lineAt(file, position);
      ahead = this.readAhead ??= { bytes: Buffer.allocUnsafeSlow(READ_AHEAD_BYTES), offset: 0, end: 0 };
      // A read of the page cache as a rule: done in place, it costs microseconds; sent to libuv's
      // thread pool, its round trip slowed each delivery by about a fifth.
      const bytesRead = readSync(file.fd, ahead.bytes, 0, READ_AHEAD_BYTES, position.offset);
      ahead.offset = position.offset;
      ahead.end = position.offset + bytesRead;
    }
    const start = position.offset - ahead.offset;
    return ahead.bytes.toString('utf8', start, start + Math.min(position.length, ahead.end - position.offset));
  }

  /** `entry` (as folded now) with its `keptOnDisk` fields as `line`, its line at `position`, holds them. */
  private restored(entry: E, line: string, position: LinePosition): W {
    let stored: Record<string, unknown> | undefined;
    try {
      const parsed = JSON.parse(line) as unknown;
      stored = typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>) : undefined;
    } catch {
      stored = undefined;
    }
    const onDisk = this.kind.keptOnDisk ?? [];
    if (stored === undefined || stored.type !== entry.type || !onDisk.every((field) => field in stored!) || !sameStrings(entry, stored)) {
      throw new Error(`the ${this.kind.label} ledger ${this.where} changed under the holder of its lock (byte ${position.offset})`);
    }
    const whole: Record<string, unknown> = { ...entry };
    for (const field of onDisk) whole[field] = stored[field];
    return whole as W;
  }

  /** Compaction's lines: each live entry whole (its `keptOnDisk` fields copied from its old line), each placed anew. */
  private async *rewrite(live: Iterable<E>): AsyncIterable<string> {
    let old: FileHandle | undefined;
    let offset = 0;
    try {
      for (const entry of live) {
        const position = positionOf(entry);
        if (position !== undefined) old ??= await open(this.store.file!, 'r');
        const line = `${JSON.stringify(position === undefined ? entry : this.restored(entry, lineAt(old!, position), position))}\n`;
        const length = Buffer.byteLength(line);
        if (position !== undefined) place(entry, { offset, length });
        offset += length;
        yield line;
      }
    } finally {
      await old?.close();
    }
  }
}

/** A ledger open for writing: what `withLedger` hands out and closes. */
export interface WritableLedger {
  close(): Promise<void>;
}

/**
 * Runs `work` with the ledger at `place` (a path: the file there) locked and open (`open` is the
 * kind's own, such as `Ledger.open`); the ledger is closed and the lock released whatever happens.
 * A second run, on this machine or (with a shared store) on another, waits up to `waitMs`, then
 * fails with exit 10 (LEDGER_LOCKED).
 */
export async function withLedger<L extends WritableLedger, T>(
  place: LedgerPlace | string,
  kind: LedgerKind,
  options: { waitMs: number; clock: Clock; open: (lines: LineStore) => Promise<L> },
  work: (ledger: L) => Promise<T>,
): Promise<T> {
  const { lines, lock: acquire } = typeof place === 'string' ? filePlace(place) : place;
  const lock = await acquire({ waitMs: options.waitMs, clock: options.clock, kind }).catch((error: unknown) => {
    throw unusableLedger(lines.where, kind, error);
  });
  try {
    const ledger = await options.open(lines).catch((error: unknown) => {
      throw unusableLedger(lines.where, kind, error);
    });
    try {
      return await work(ledger);
    } finally {
      await ledger.close();
    }
  } finally {
    await lock.release();
  }
}

/** A ledger that cannot be created or written (permissions, a read-only disk) is a local setting to fix. */
function unusableLedger(path: string, kind: LedgerKind, error: unknown): unknown {
  const code = (error as NodeJS.ErrnoException).code;
  if (error instanceof CliError || typeof code !== 'string') return error;
  return new UsageError(`cannot use the ${kind.label} ledger ${path} (${code}); nothing was sent`, {
    hint: 'Pass --ledger PATH to keep it somewhere writable, or fix the directory permissions.',
  });
}
