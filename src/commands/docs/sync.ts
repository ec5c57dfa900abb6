import { ledgerPlaceOf } from '../../state/backend';
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { basename } from 'node:path';
import { Transform, type Readable } from 'node:stream';
import * as z from 'zod';
import type { ApiClient, ApiResponse } from '../../api/types';
import type { TolerantResponseOf } from '../../api/tolerant';
import { openFileSetProgress, type FileProgress, type FileSetProgress } from '../../batch/fileSetProgress';
import { checkRows, csvRecords, csvRows, firstLine, ndjsonRows, readInputText, sourceName } from '../../batch/input';
import { withLedger } from '../../batch/ledger';
import { DOCUMENTS, DocumentsLedger, DocumentsLedgerView, readDocumentsLedger, type DocumentTarget } from '../../batch/ledgers/documents';
import { BATCH_FIELDS, batchFlagsOf, type BatchFlags } from '../../batch/options';
import { RateLimitPacer } from '../../batch/pacer';
import { runPool } from '../../batch/pool';
import { alignedCells, cells, plainWidth, runBatch, type BatchJob } from '../../batch/run';
import { sendTracked } from '../../batch/send';
import { DocumentUploadFields, fieldErrors, pathId, safeDocumentFilename } from '../../contract';
import { CliError, EXIT, InterruptedError, UsageError } from '../../errors';
import { createOutput, type Output } from '../../output';
import type { Palette } from '../../output/colors';
import { formatBytes } from '../../output/progress';
import { sanitizeLine } from '../../output/sanitize';
import { writeText } from '../../output/write';
import type { Context } from '../../types';
import { flagConflict, parseFlagFields } from '../parseFlags';
import type { RawInvocation } from '../types';
import { documentsByName, fileErrorProblem, knownRuleCheck, unreadableProblem, uploadFileOf, type RuleCheck } from './files';
import { describeDecision, groupKey, groupsToList, plan, type Decision, type LedgerKnowledge, type Listing, type PlannedFile, type SyncFile } from './lib/syncPlan';
import { excluder, hashFile, HASH_CHUNK_BYTES, manifestSource, walkLayout, type LeftOut, type ManifestRow, type SourceList, type SourceProblem, type SyncSource } from './lib/syncSources';
import { syncDocuments } from './register';

export interface SyncOptions extends BatchFlags {
  dir: string;
  manifest?: string;
  excludes: string[];
  description?: string;
  uploadChanged: boolean;
  skipInvalid: boolean;
  dryRun: boolean;
  offline: boolean;
}

const SyncFields = z.strictObject({ description: DocumentUploadFields.shape.description, ...BATCH_FIELDS });

export function parseOptions(raw: RawInvocation): SyncOptions {
  const { flags } = raw;
  const { description, concurrency, lock_wait } = parseFlagFields(SyncFields, syncDocuments.flags!, flags);
  if (flags.offline === true && flags.dryRun !== true) throw flagConflict('--offline plans from the ledger alone and sends nothing, so it goes with --dry-run');
  const excludes = flags.exclude === undefined ? [] : (Array.isArray(flags.exclude) ? flags.exclude : [flags.exclude]).map(String);
  return {
    dir: String(raw.args[0]),
    ...(typeof flags.manifest === 'string' ? { manifest: flags.manifest } : {}),
    excludes,
    ...(description === undefined ? {} : { description }),
    uploadChanged: flags.uploadChanged === true,
    skipInvalid: flags.skipInvalid === true,
    dryRun: flags.dryRun === true,
    offline: flags.offline === true,
    ...batchFlagsOf({ concurrency, lock_wait }, flags),
  };
}

/** A file `docs sync` will not send, reported as a failed item (`--skip-invalid`) or listed before anything is sent. */
export class SyncItemError extends CliError {
  readonly exitCode = EXIT.PARTIAL;
  constructor(
    readonly code: 'INVALID_FILE' | 'DOCUMENT_CONFLICT' | 'FILE_CHANGED',
    message: string,
    options: { details?: Record<string, unknown>; hint?: string } = {},
  ) {
    super(message, options);
  }
}

// ---------------------------------------------------------------------------------------------
// The files: from the walk or the manifest, checked and hashed before anything is sent.

const MANIFEST_COLUMNS = ['path', 'account_id', 'tax_year', 'description'];
const ManifestFields = z.strictObject({
  path: z.string({ error: 'is required' }).min(1, 'must not be empty'),
  account_id: pathId,
  tax_year: DocumentUploadFields.shape.tax_year,
  description: DocumentUploadFields.shape.description,
});

/** The manifest's rows as files under `<dir>`; a row that breaks a rule or leads out of `<dir>` is a problem. */
async function readManifest(ctx: Context, options: SyncOptions, manifest: string): Promise<SourceList> {
  const text = await readInputText(ctx, manifest, '--manifest');
  const source = sourceName(manifest);
  const first = firstLine(text);
  if (first === undefined) throw new UsageError(`--manifest ${source} names no files`, { hint: 'Give a CSV with a path,account_id,tax_year header, or NDJSON objects with those keys.' });
  const rows = first.startsWith('{') ? ndjsonRows(text, MANIFEST_COLUMNS, '{"path": "ada/w2.pdf", "account_id": 1001, "tax_year": 2025}') : csvRows(csvRecords(text, source), source, MANIFEST_COLUMNS);
  const list: SourceList = { sources: [], problems: [], leftOut: { hidden: 0, excluded: 0, notRegular: 0 } };
  const excluded = excluder(options.excludes);
  const { items, bad } = checkRows<ManifestRow>(rows, (row) => {
    const parsed = ManifestFields.safeParse(row.fields);
    if (!parsed.success) return { problems: Object.entries(fieldErrors(parsed.error)).map(([field, messages]) => `${field} ${messages.join('; ')}`) };
    return { item: { line: row.line, ...parsed.data } };
  });
  for (const row of bad) for (const problem of row.problems) list.problems.push({ where: row.origin, problem });
  for (const item of items) {
    const found = manifestSource(options.dir, item, excluded);
    if (found === 'hidden' || found === 'excluded') list.leftOut[found] += 1;
    else if ('problem' in found) list.problems.push(found);
    else list.sources.push(found);
  }
  return list;
}

/** `line 4: path ../x.pdf is outside docs`, `1001/2025/notes.rtf is of a type ...`. */
function problemText(problem: SourceProblem): string {
  if (problem.where.startsWith('line ')) return `${problem.where}: ${problem.field === undefined ? '' : `${problem.field} `}${sanitizeLine(problem.problem)}`;
  return `${sanitizeLine(problem.where)} ${sanitizeLine(problem.problem)}`;
}

/** Files checked and hashed at a time: the disk's latency, not its bandwidth, bounds many small files. */
const PREPARE_CONCURRENCY = 8;

/** Each file: readable, a regular file, within the size and type rules known for the service, then hashed chunk by chunk; in input order. */
async function prepareFiles(list: SourceList, description: string | undefined, ruleOf: RuleCheck): Promise<{ files: SyncFile[]; problems: SourceProblem[] }> {
  const prepared: Array<SyncFile | SourceProblem | undefined> = new Array(list.sources.length);
  // One read buffer per file in progress, reused from file to file.
  const buffers = Array.from({ length: PREPARE_CONCURRENCY }, () => Buffer.allocUnsafe(HASH_CHUNK_BYTES));
  await runPool(list.sources, PREPARE_CONCURRENCY, new AbortController().signal, async (source, index) => {
    const buffer = buffers.pop()!;
    try {
      prepared[index] = await prepareFile(source, description, buffer, ruleOf);
    } finally {
      buffers.push(buffer);
    }
  });
  const files: SyncFile[] = [];
  const problems = [...list.problems];
  for (const entry of prepared) {
    if (entry === undefined) continue;
    if ('problem' in entry) problems.push(entry);
    else files.push(entry);
  }
  return { files, problems };
}

async function prepareFile(source: SyncSource, description: string | undefined, buffer: Buffer, ruleOf: RuleCheck): Promise<SyncFile | SourceProblem> {
  const where = source.line === undefined ? source.relative : `line ${source.line}`;
  const named = (problem: string): SourceProblem => ({ where, problem: source.line === undefined ? problem : `${source.relative} ${problem}` });
  // The walk saw a regular file and its size; a manifest's path is looked at here.
  if (source.size === undefined) {
    const unreadable = await unreadableProblem(source.path);
    if (unreadable !== undefined) return named(unreadable);
  }
  const refused = await ruleOf(basename(source.path), source.size ?? (await stat(source.path)).size);
  if (refused !== undefined) return named(refused);
  try {
    const { sha256, size } = await hashFile(source.path, buffer);
    return { ...source, description: source.description ?? description, filename: safeDocumentFilename(basename(source.path)), sha256, size };
  } catch (error) {
    return named(fileErrorProblem(error));
  }
}

async function collectFiles(ctx: Context, options: SyncOptions): Promise<{ files: SyncFile[]; problems: SourceProblem[]; leftOut: LeftOut }> {
  const list = options.manifest === undefined ? await walkLayout(options.dir, options.excludes) : await readManifest(ctx, options, options.manifest);
  const { files, problems } = await prepareFiles(list, options.description, await knownRuleCheck(ctx));
  // In input order: a manifest's lines by number, a walk's entries by path.
  const lineOf = (problem: SourceProblem) => (problem.where.startsWith('line ') ? Number(problem.where.slice(5)) : 0);
  problems.sort((a, b) => lineOf(a) - lineOf(b) || (a.where < b.where ? -1 : a.where > b.where ? 1 : 0));
  if (problems.length > 0 && !options.skipInvalid) {
    const texts = problems.map(problemText);
    const entries = new Set(problems.map((problem) => problem.where)).size;
    const listed = texts.slice(0, 20);
    const more = texts.length > listed.length ? `\n  (and ${texts.length - listed.length} more)` : '';
    throw new UsageError(`cannot sync ${entries} ${entries === 1 ? 'entry' : 'entries'} of ${options.manifest ?? options.dir}; nothing was sent:\n  ${listed.join('\n  ')}${more}`, {
      details: { problems: texts },
      hint: 'Fix or --exclude them, or pass --skip-invalid to sync the rest and report these as failed.',
    });
  }
  return { files, problems, leftOut: list.leftOut };
}

// ---------------------------------------------------------------------------------------------
// Planning: what the ledger and the accounts' lists say of each file.

interface SyncSession {
  ctx: Context;
  origin: string;
  profile: string | null;
}

function targetOf(session: SyncSession, file: Pick<SyncFile, 'account_id' | 'tax_year' | 'filename'>): DocumentTarget {
  return { origin: session.origin, account_id: file.account_id, tax_year: file.tax_year, filename: file.filename };
}

function knowledgeOf(view: DocumentsLedgerView, session: SyncSession): LedgerKnowledge {
  return {
    uploadedContent: (account_id, tax_year, sha256) => {
      const entry = view.uploadedContent({ origin: session.origin, account_id, tax_year }, sha256);
      return entry && { document_id: entry.document_id, filename: entry.filename };
    },
    uploadedUnder: (slot) => {
      const entry = view.uploadedUnder(targetOf(session, slot));
      return entry && { sha256: entry.sha256, document_id: entry.document_id };
    },
    openIntent: (slot) => {
      const entry = view.openIntent(targetOf(session, slot));
      return entry && { sha256: entry.sha256, known_ids: entry.known_ids };
    },
  };
}

/** The account and year lists the plan needs (none when the ledger settles every file), read through the pacer. */
async function readListings(
  api: ApiClient,
  files: readonly SyncFile[],
  knowledge: LedgerKnowledge,
  options: { pacer: RateLimitPacer; signal: AbortSignal; concurrency: number },
): Promise<Map<string, Listing>> {
  const listings = new Map<string, Listing>();
  await runPool(groupsToList(files, knowledge), options.concurrency, options.signal, async (group) => {
    const byName = await documentsByName(api, group.account_id, group.tax_year, { pacer: options.pacer, signal: options.signal });
    listings.set(groupKey(group), new Map([...byName].map(([name, documents]) => [name, documents.map((document) => ({ id: String(document.id) }))])));
  });
  return listings;
}

// ---------------------------------------------------------------------------------------------
// Output: a line per file, and the summary.

/** One entry of a run: a planned file, or an entry that cannot be synced (`--skip-invalid`). */
interface SyncEntry {
  relative: string;
  planned?: PlannedFile;
}

type SyncOutcome =
  | { kind: 'uploaded'; item: SyncEntry; response: ApiResponse<TolerantResponseOf<'uploadDocument'>> }
  | { kind: 'skipped'; item: SyncEntry; decision: Decision }
  | { kind: 'failed'; item: SyncEntry; error: CliError };

function placeOf(entry: SyncEntry): Record<string, unknown> {
  const file = entry.planned?.file;
  return file === undefined ? { path: entry.relative } : { path: file.relative, account_id: file.account_id, tax_year: file.tax_year, filename: file.filename };
}

function outcomeJson(outcome: SyncOutcome): unknown {
  switch (outcome.kind) {
    case 'uploaded':
      return { ...placeOf(outcome.item), result: 'uploaded', document: outcome.response.json };
    case 'skipped':
      return { ...placeOf(outcome.item), result: 'skipped', reason: outcome.decision.reason, ...(outcome.decision.document_id === undefined ? {} : { document_id: outcome.decision.document_id }) };
    case 'failed':
      return { ...placeOf(outcome.item), result: outcome.error.code === 'DOCUMENT_CONFLICT' ? 'conflict' : 'failed', error: outcome.error.toBody().error };
  }
}

/** The widest result word and path of a run: the columns its lines are aligned to on a terminal. */
function lineWidths(entries: readonly SyncEntry[]): number[] {
  return [Math.max(...['uploaded', 'skipped', 'conflict', 'failed'].map(plainWidth)), Math.max(0, ...entries.map((entry) => plainWidth(sanitizeLine(entry.relative))))];
}

/** `uploaded  1001/2025/w2.pdf  document 8102  24 B` on a terminal, aligned to `widths`; tab-separated fields in a pipe. */
function outcomeLine(outcome: SyncOutcome, out: Output, colors: Palette, widths: readonly number[]): string {
  const tty = out.forPeople;
  const file = outcome.item.planned?.file;
  const where = [sanitizeLine(outcome.item.relative), ...(tty || file === undefined ? [] : [String(file.account_id), String(file.tax_year)])];
  switch (outcome.kind) {
    case 'uploaded': {
      const id = out.format.text(outcome.response.data.id);
      return alignedCells([tty ? colors.green('uploaded') : 'uploaded', ...where, tty ? `document ${id}` : id, tty ? formatBytes(file?.size ?? 0) : ''], widths, out);
    }
    case 'skipped':
      return alignedCells([tty ? colors.dim('skipped') : 'skipped', ...where, tty ? describeDecision(outcome.decision) : outcome.decision.reason, tty ? '' : (outcome.decision.document_id ?? '')], widths, out);
    case 'failed': {
      const word = outcome.error.code === 'DOCUMENT_CONFLICT' ? 'conflict' : 'failed';
      return alignedCells([tty ? colors.red(word) : word, ...where, outcome.error.code, sanitizeLine(outcome.error.message)], widths, out);
    }
  }
}

/** `left out: 2 hidden, 1 excluded, 1 not a regular file` (only what there is). */
function leftOutNote(leftOut: LeftOut): string | undefined {
  const parts = [
    leftOut.hidden > 0 ? `${leftOut.hidden} hidden` : '',
    leftOut.excluded > 0 ? `${leftOut.excluded} excluded` : '',
    leftOut.notRegular > 0 ? `${leftOut.notRegular} not ${leftOut.notRegular === 1 ? 'a regular file' : 'regular files'}` : '',
  ].filter((part) => part !== '');
  return parts.length === 0 ? undefined : `left out: ${parts.join(', ')}`;
}

function conflictError(decision: Decision): SyncItemError {
  return new SyncItemError('DOCUMENT_CONFLICT', describeDecision(decision), { details: { reason: decision.reason, ...(decision.document_id === undefined ? {} : { document_id: decision.document_id }) } });
}

function invalidEntries(problems: readonly SourceProblem[]): SyncOutcome[] {
  return problems.map((problem) => ({ kind: 'failed', item: { relative: problem.where }, error: new SyncItemError('INVALID_FILE', problemText(problem)) }));
}

// ---------------------------------------------------------------------------------------------
// Sending: each upload's bytes checked against the content planned.

/**
 * The file's bytes for an upload, checked as they go: more bytes than planned, fewer, or other
 * content (sha256 at the end) abort the request before the multipart body is closed, so the
 * service cannot store a file that changed while it was read.
 */
function checkedContent(file: SyncFile, abort: (error: SyncItemError) => void): () => Readable {
  const changed = (how: string) => new SyncItemError('FILE_CHANGED', `${file.relative} ${how} while it was being uploaded; nothing was stored`, { hint: 'Run the sync again once the file is complete.' });
  return () => {
    const source = createReadStream(file.path);
    const hash = createHash('sha256');
    let seen = 0;
    let stopped = false;
    const stop = (error: SyncItemError) => {
      stopped = true;
      source.destroy();
      abort(error);
    };
    // The callbacks of a stopped upload are never called: its body never ends.
    const guard = new Transform({
      transform(chunk: Buffer, _encoding, callback) {
        if (stopped) return;
        seen += chunk.length;
        if (seen > file.size) return stop(changed('grew'));
        hash.update(chunk);
        callback(null, chunk);
      },
      flush(callback) {
        if (stopped) return;
        if (seen !== file.size) return stop(changed('shrank'));
        if (hash.digest('hex') !== file.sha256) return stop(changed('changed'));
        callback();
      },
    });
    source.on('error', (error) => stop(changed(`could not be read (${fileErrorProblem(error)})`)));
    return source.pipe(guard);
  };
}

function syncJob(session: SyncSession, api: ApiClient, ledger: DocumentsLedger, progress: FileSetProgress, entries: readonly SyncEntry[]): BatchJob<SyncEntry, SyncOutcome> {
  const { ctx } = session;
  // Measured once, at the first line: every entry is known before the run starts.
  let widths: number[] | undefined;
  return {
    noun: 'documents',
    tally: [
      ['uploaded', 'uploaded'],
      ['skipped', 'skipped'],
      ['failed', 'failed'],
    ],
    async send(entry, { pacer, signal }) {
      const { file, decision } = entry.planned!;
      const target = targetOf(session, file);
      const meta = () => ({ profile: session.profile, at: ctx.clock.now() });
      const content = new AbortController();
      // Shown once its request may go: a file waiting for the rate limit is not at 0% of a transfer.
      let fileProgress: FileProgress | undefined;
      try {
        const { response } = await sendTracked(
          {
            recordIntent: () => {
              fileProgress = progress.start(file.relative, file.size);
              return ledger.recordIntent(target, { sha256: file.sha256, size: file.size, known_ids: decision.action === 'upload' ? decision.known_ids : [], ...meta() });
            },
            send: () =>
              api.upload(
                file.account_id,
                { ...uploadFileOf(file.path, file.size), open: checkedContent(file, (error) => content.abort(error)) },
                { tax_year: file.tax_year, ...(file.description === undefined ? {} : { description: file.description }) },
                { onProgress: (sent) => fileProgress?.sent(sent), signal: content.signal },
              ),
            recordRefused: (intent, error) => ledger.recordRefused(intent, target, { code: error.code, ...meta() }),
            recordDone: (intent, answer) => {
              fileProgress?.done();
              return ledger.recordUploaded(target, { intent, sha256: file.sha256, size: file.size, document_id: String(answer.data.id ?? ''), ...meta() });
            },
          },
          { pacer, signal },
        );
        return { kind: 'uploaded', item: entry, response };
      } catch (error) {
        fileProgress?.failed();
        throw error;
      }
    },
    failed: (item, error) => ({ kind: 'failed', item, error }),
    json: outcomeJson,
    line: (outcome, out, colors) => outcomeLine(outcome, out, colors, (widths ??= lineWidths(entries))),
    // Content the ledger knows is the normal case of every re-run: counted, listed with --verbose.
    shown: (outcome, context) => context.globals.verbose || !(outcome.kind === 'skipped' && outcome.decision.reason === 'uploaded_before'),
    label: (entry) => sanitizeLine(entry.relative),
  };
}

// ---------------------------------------------------------------------------------------------

async function openSession(ctx: Context): Promise<SyncSession> {
  const settings = await ctx.settings();
  return { ctx, origin: new URL(settings.baseUrl).origin, profile: settings.profileName };
}

/** The plan, a line per file (NDJSON with `--json`), and what it comes to; nothing is uploaded. */
async function printPlan(ctx: Context, planned: PlannedFile[], problems: SourceProblem[], leftOut: LeftOut, offline: boolean): Promise<void> {
  const out = createOutput(ctx);
  for (const { file, decision } of planned) {
    if (ctx.globals.json) {
      await out.ndjson({ path: file.relative, account_id: file.account_id, tax_year: file.tax_year, filename: file.filename, plan: { action: decision.action, reason: decision.reason, ...(decision.document_id === undefined ? {} : { document_id: decision.document_id }) } });
    } else {
      const where = out.forPeople ? [sanitizeLine(file.relative)] : [sanitizeLine(file.relative), String(file.account_id), String(file.tax_year)];
      await writeText(ctx.io.stdout, cells([decision.action, ...where, out.forPeople ? describeDecision(decision) : decision.reason], out));
    }
  }
  for (const problem of problems) {
    if (ctx.globals.json) await out.ndjson({ path: problem.where, plan: { action: 'fail', reason: 'invalid_file' }, error: { code: 'INVALID_FILE', message: problemText(problem) } });
    else await writeText(ctx.io.stdout, cells(['fail', sanitizeLine(problem.where), problemText(problem)], out));
  }
  const count = (action: Decision['action']) => planned.filter((entry) => entry.decision.action === action);
  const uploads = count('upload');
  const bytes = uploads.reduce((sum, entry) => sum + entry.file.size, 0);
  const left = leftOutNote(leftOut);
  await out.note(
    `dry run: ${uploads.length} to upload (${formatBytes(bytes)}), ${count('skip').length} to skip, ${count('conflict').length} in conflict` +
      (problems.length > 0 ? `, ${problems.length} invalid` : '') +
      (left === undefined ? '' : `; ${left}`) +
      `; ${offline ? 'nothing was sent (planned from the ledger alone)' : 'nothing was uploaded'}`,
  );
}

export async function run(ctx: Context, options: SyncOptions): Promise<number> {
  const { files, problems, leftOut } = await collectFiles(ctx, options);
  const session = await openSession(ctx);
  const ledgerPlace = await ledgerPlaceOf(DOCUMENTS, ctx, options);
  const interrupted = ctx.interrupted();
  const planWith = async (view: DocumentsLedgerView, api: ApiClient | undefined, pacer: RateLimitPacer) => {
    const knowledge = knowledgeOf(view, session);
    const listings =
      api === undefined
        ? undefined
        : await readListings(api, files, knowledge, { pacer, signal: interrupted, concurrency: options.concurrency }).catch((error: unknown) => {
            if (interrupted.aborted) throw new InterruptedError("interrupted while reading the accounts' document lists; nothing was uploaded");
            throw error;
          });
    return plan(files, knowledge, listings, { uploadChanged: options.uploadChanged });
  };

  if (options.dryRun) {
    // Read without the lock: a dry run changes nothing, so it may run beside a real one.
    const view = await readDocumentsLedger(ledgerPlace.lines);
    const planned = await planWith(view, options.offline ? undefined : await ctx.api(), new RateLimitPacer(ctx.clock));
    await printPlan(ctx, planned, problems, leftOut, options.offline);
    return EXIT.OK;
  }

  const api = await ctx.api();
  return withLedger(ledgerPlace, DOCUMENTS, { waitMs: options.lockWaitMs, clock: ctx.clock, open: (lines) => DocumentsLedger.open(lines) }, async (ledger) => {
    const pacer = new RateLimitPacer(ctx.clock);
    const planned = await planWith(ledger, api, pacer);
    // Interrupted uploads the lists show stored are recorded now, whatever this run does with the file.
    for (const { file, decision } of planned) {
      if (decision.landed === undefined) continue;
      const target = targetOf(session, file);
      const intent = ledger.openIntent(target);
      await ledger.recordUploaded(target, { sha256: decision.landed.sha256, size: intent?.size ?? file.size, document_id: decision.landed.document_id, profile: session.profile, at: ctx.clock.now() });
    }
    const left = leftOutNote(leftOut);
    if (left !== undefined) await createOutput(ctx).note(left);
    const send = planned.filter((entry) => entry.decision.action === 'upload').map((entry) => ({ relative: entry.file.relative, planned: entry }));
    const settled: SyncOutcome[] = [
      ...invalidEntries(problems),
      ...planned.flatMap((entry): SyncOutcome[] => {
        const item = { relative: entry.file.relative, planned: entry };
        if (entry.decision.action === 'skip') return [{ kind: 'skipped', item, decision: entry.decision }];
        if (entry.decision.action === 'conflict') return [{ kind: 'failed', item, error: conflictError(entry.decision) }];
        return [];
      }),
    ];
    const progress = await openFileSetProgress(ctx, {
      files: send.length,
      bytes: send.reduce((sum, entry) => sum + entry.planned.file.size, 0),
      keepFinished: false,
      lines: false,
    });
    const result = await runBatch(ctx, syncJob(session, api, ledger, progress, [...send, ...settled.map((outcome) => outcome.item)]), { send, settled }, {
      concurrency: options.concurrency,
      pacer,
      progress: { clear: () => progress.clear(), advance() {}, waiting: (untilMs) => progress.waiting(untilMs), finish: () => progress.finish() },
    });
    return result.exitCode;
  });
}
