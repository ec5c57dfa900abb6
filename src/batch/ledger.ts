import { mkdir, open, truncate, type FileHandle } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Clock, Context } from '../types';
import { CliError, UsageError } from '../errors';
import { appDirectory } from '../lib/paths';
import { writeFileAtomically } from '../lib/files';
import { acquireLedgerLock } from './lock';

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
}

/** Where a kind's ledger lives unless `--ledger` says otherwise: the user's data directory. */
export function defaultPathOf(kind: Pick<LedgerKind, 'fileName'>, env: Record<string, string | undefined>, platform: NodeJS.Platform = process.platform): string {
  return join(appDirectory('data', env, platform), kind.fileName);
}

/** `--ledger PATH` when given, else the kind's default. */
export function ledgerPathOf(kind: Pick<LedgerKind, 'fileName'>, ctx: Pick<Context, 'env'>, flags: { ledgerPath: string | undefined }): string {
  return flags.ledgerPath ?? defaultPathOf(kind, ctx.env);
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
export async function forEachLedgerLine<E extends { type: string }>(path: string, kind: LedgerKind, apply: (entry: E) => void): Promise<{ lines: number; completeLength: number }> {
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
      lineNumber += 1;
      completeLength += end + 1;
      if (line.trim() !== '') {
        apply(parseEntry<E>(line, lineNumber, path, kind));
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

/** Compact when at least this many lines are superseded (and at least as many as are live). */
const COMPACT_MIN_DROPPED = 100;

/**
 * The ledger file opened for appending, by the holder of its lock. Appends are group-committed:
 * lines queued while a write is in flight go out together, each batch written whole and
 * `fdatasync`ed before the callers' promises resolve, so an intent is on disk before its request
 * is sent.
 */
export class LedgerAppender {
  private queue: Array<{ line: string; resolve: () => void; reject: (error: unknown) => void }> = [];
  private flushing: Promise<void> | undefined;
  /** A write that nobody waited for failed. */
  private failure: unknown;

  private constructor(
    readonly path: string,
    private readonly kind: LedgerKind,
    private handle: FileHandle | undefined,
  ) {}

  /**
   * Opens `path` for appending after its `read.lines` lines were folded: rewrites it as `live` when
   * most lines are superseded (`compacted`: the fold should keep only `live`), else drops a torn last line.
   */
  static async open<E>(path: string, kind: LedgerKind, read: { lines: number; completeLength: number }, live: E[]): Promise<{ appender: LedgerAppender; compacted: boolean }> {
    await mkdir(dirname(path), { recursive: true, mode: 0o700 });
    const dropped = read.lines - live.length;
    const compacted = dropped >= COMPACT_MIN_DROPPED && dropped >= live.length;
    if (compacted) {
      await writeFileAtomically(path, live.map((entry) => `${JSON.stringify(entry)}\n`).join(''), { durable: true });
    } else {
      // Drop a line torn by a kill mid-write, or the next append would be glued to it.
      await truncate(path, read.completeLength).catch((error: NodeJS.ErrnoException) => {
        if (error.code !== 'ENOENT') throw error;
      });
    }
    return { appender: new LedgerAppender(path, kind, await open(path, 'a', 0o600)), compacted };
  }

  /**
   * Appends one entry; durable before it resolves. With `wait: false` it resolves at once and
   * goes out with the next flush (still in order), for a line whose loss a re-run repairs (an
   * outcome the service can be asked again); a failure to write it is thrown by `close`.
   */
  append(entry: unknown, options: { wait?: boolean } = {}): Promise<void> {
    const written = new Promise<void>((resolve, reject) => {
      this.queue.push({ line: `${JSON.stringify(entry)}\n`, resolve, reject });
      this.flushing ??= this.flush();
    });
    if (options.wait !== false) return written;
    written.catch((error: unknown) => {
      this.failure ??= error;
    });
    return Promise.resolve();
  }

  async close(): Promise<void> {
    await this.flushing;
    await this.handle?.close();
    this.handle = undefined;
    if (this.failure !== undefined) throw this.failure;
  }

  /**
   * Writes batches until the queue is empty, and says so in the same tick as it sees it empty: a
   * `.finally` a microtask later left a gap in which a line queued by a concurrent caller found a
   * flush still marked running, and waited for ever.
   */
  private async flush(): Promise<void> {
    while (this.queue.length > 0) {
      const batch = this.queue.splice(0);
      try {
        if (!this.handle) throw new Error(`the ${this.kind.label} ledger ${this.path} is closed`);
        await this.handle.write(batch.map((item) => item.line).join(''));
        await this.handle.datasync();
        for (const item of batch) item.resolve();
      } catch (error) {
        for (const item of batch) item.reject(error);
      }
    }
    this.flushing = undefined;
  }
}

/**
 * A ledger's content folded from its lines, by each kind (`apply`, `liveEntries`), and, for the
 * holder of its lock, appended to. Readers need no lock: lines are appended whole and the file is
 * replaced only by an atomic rename (compaction).
 */
export abstract class LedgerState<E extends { type: string }> {
  /** Every line in order, for a kind whose `liveEntries` filters them (a kind may fold without it). */
  protected entries: E[] = [];
  /** Lines in the file, to tell when compaction pays. */
  private lines = 0;
  private completeLength = 0;
  private appender: LedgerAppender | undefined;

  constructor(
    readonly path: string,
    private readonly kind: LedgerKind,
  ) {}

  /** Folds one entry into the state (read or appended). */
  protected abstract apply(entry: E): void;
  /** The entries still needed: what compaction keeps. */
  protected abstract liveEntries(): E[];

  /** Reads the file into the state; a missing file is an empty ledger. */
  async read(): Promise<this> {
    const read = await forEachLedgerLine<E>(this.path, this.kind, (entry) => this.apply(entry));
    this.completeLength = read.completeLength;
    this.lines = read.lines;
    return this;
  }

  /** Opens the file for appending, by the holder of its lock (after `read`). */
  protected async openForAppend(): Promise<void> {
    const live = this.liveEntries();
    const { appender, compacted } = await LedgerAppender.open(this.path, this.kind, { lines: this.lines, completeLength: this.completeLength }, live);
    if (compacted) {
      this.entries = this.entries.length === 0 ? [] : live;
      this.lines = live.length;
    }
    this.appender = appender;
  }

  /** Folds `entry` in and appends it; durable when it resolves (see `LedgerAppender.append` for `wait: false`). */
  protected append(entry: E, options: { wait?: boolean } = {}): Promise<void> {
    this.apply(entry);
    this.lines += 1;
    if (!this.appender) return Promise.reject(new Error(`the ${this.kind.label} ledger ${this.path} is closed`));
    return this.appender.append(entry, options);
  }

  async close(): Promise<void> {
    await this.appender?.close();
    this.appender = undefined;
  }
}

/** A ledger open for writing: what `withLedger` hands out and closes. */
export interface WritableLedger {
  close(): Promise<void>;
}

/**
 * Runs `work` with the ledger at `path` locked and open (`open` is the kind's own, such as
 * `Ledger.open`); the ledger is closed and the lock released whatever happens. A second run
 * waits up to `waitMs`, then fails with exit 10 (LEDGER_LOCKED).
 */
export async function withLedger<L extends WritableLedger, T>(
  path: string,
  kind: LedgerKind,
  options: { waitMs: number; clock: Clock; open: (path: string) => Promise<L> },
  work: (ledger: L) => Promise<T>,
): Promise<T> {
  const lock = await acquireLedgerLock(path, { waitMs: options.waitMs, clock: options.clock, kind }).catch((error: unknown) => {
    throw unusableLedger(path, kind, error);
  });
  try {
    const ledger = await options.open(path).catch((error: unknown) => {
      throw unusableLedger(path, kind, error);
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
