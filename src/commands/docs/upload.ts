import { stat } from 'node:fs/promises';
import type { TolerantResponseOf } from '../../api/tolerant';
import type { ApiClient, UploadFile } from '../../api/types';
import { openFileSetProgress } from '../../batch/fileSetProgress';
import { DocumentUploadFields } from '../../contract/requests';
import { pathId } from '../../contract/rules';
import type { Context } from '../../types';
import { ApiError, CliError, EXIT, InterruptedError, LimitError, NotTheApiError, ProtocolError, UsageError } from '../../errors';
import { createOutput, dateColumn, fileName, label, type Format, type Output } from '../../output';
import { sanitizeLine } from '../../output/sanitize';
import { definedOnly, parseFlagFields, parseId } from '../parseFlags';
import type { RawInvocation } from '../types';
import { documentsByName, knownRuleCheck, storedNameKey, unreadableProblem, uploadFileOf, type RuleCheck } from './files';
import { uploadDocuments } from './register';

export interface UploadOptions {
  accountId: number;
  paths: string[];
  fields: { tax_year: number; description?: string };
  /** Upload even when the account has a document of the same name and tax year. */
  allowDuplicate: boolean;
}

export function parseOptions(raw: RawInvocation): UploadOptions {
  const [accountId, paths] = raw.args;
  const fields = parseFlagFields(DocumentUploadFields, uploadDocuments.flags!, raw.flags);
  return {
    accountId: parseId(accountId, '<account-id>'),
    paths: Array.isArray(paths) ? paths.map(String) : [],
    fields,
    allowDuplicate: raw.flags.allowDuplicate === true,
  };
}

/** `nothing was uploaded: a.zip is of a type ...; b.pdf does not exist`, naming every file at fault. */
function refuseFiles(problems: Array<[string, string]>, options: { hint?: string }): UsageError {
  const list = problems.map(([path, problem]) => `${sanitizeLine(path)} ${problem}`).join('; ');
  const details: Record<string, string[]> = {};
  for (const [path, problem] of problems) (details[path] ??= []).push(problem);
  return new UsageError(`nothing was uploaded: ${list}`, { details, hint: options.hint });
}

/**
 * Checks every file before the first upload, so that a typo in the third name does not leave the
 * first two uploaded: each must exist and be a regular readable file, no two may be stored under
 * one name, and none may break a size or type rule known for this service (`ruleOf`; without
 * one, the service decides).
 */
export async function checkFiles(paths: string[], ruleOf: RuleCheck): Promise<UploadFile[]> {
  const problems: Array<[string, string]> = [];
  const files: UploadFile[] = [];
  const pathOfName = new Map<string, string>();
  for (const path of paths) {
    const unreadable = await unreadableProblem(path);
    if (unreadable !== undefined) {
      problems.push([path, unreadable]);
      continue;
    }
    const file = uploadFileOf(path, (await stat(path)).size);
    const problem = await ruleOf(file.filename, file.size);
    const first = pathOfName.get(storedNameKey(file.filename));
    if (problem !== undefined) problems.push([path, problem]);
    else if (first !== undefined) problems.push([path, `would be stored under the same name as ${sanitizeLine(first)}`]);
    pathOfName.set(storedNameKey(file.filename), path);
    files.push(file);
  }
  if (problems.length > 0) throw refuseFiles(problems, {});
  return files;
}

/**
 * A failure of the duplicate check's list that says nothing of the upload itself: an answer that
 * does not fit the contract, is not the API's, repeats its pages, or a 5xx or a refusal of the
 * list's query. The upload may well work, so it goes on (with a warning) instead of failing.
 */
function listFailureToOutlive(error: unknown): boolean {
  if (error instanceof ProtocolError || error instanceof NotTheApiError || error instanceof LimitError) return true;
  return error instanceof ApiError && (error.status >= 500 || (error.exitCode === EXIT.REJECTED && error.status !== 429));
}

/**
 * Refuses files whose name the account already has for the tax year (gh's `release upload`
 * refuses an existing asset unless `--clobber`): a second upload would be a second document.
 * One list of the account's documents of the year (a request per 100 of them), however many files.
 */
async function checkNotStored(ctx: Context, api: ApiClient, options: UploadOptions, files: UploadFile[], signal: AbortSignal): Promise<void> {
  let stored: Awaited<ReturnType<typeof documentsByName>>;
  try {
    stored = await documentsByName(api, options.accountId, options.fields.tax_year, { signal });
  } catch (error) {
    if (!listFailureToOutlive(error)) throw error;
    const reason = error instanceof CliError ? error.message : String(error);
    ctx.io.stderr.write(`warning: could not check whether account ${options.accountId} already has these files for ${options.fields.tax_year} (its document list failed: ${sanitizeLine(reason)}); uploading anyway\n`);
    return;
  }
  const problems: Array<[string, string]> = [];
  for (const file of files) {
    const existing = stored.get(storedNameKey(file.filename))?.[0];
    if (existing === undefined) continue;
    const uploaded = existing.uploaded_at === undefined || existing.uploaded_at === null ? '' : `, uploaded ${sanitizeLine(existing.uploaded_at)}`;
    problems.push([file.path, `is already on account ${options.accountId} for ${options.fields.tax_year} as document ${sanitizeLine(existing.id)} (${sanitizeLine(existing.filename)}${uploaded})`]);
  }
  if (problems.length > 0) throw refuseFiles(problems, { hint: 'Pass --allow-duplicate to store another document of the same name.' });
}

const HEAD = ['ID', fileName('Filename'), 'Tax year', 'Size', label('Type', { drop: 1 }), dateColumn('Uploaded')];
/** The fields of the table; an answer without one of them is completed with a read of the document. */
const SHOWN_FIELDS = ['filename', 'tax_year', 'file_size', 'file_type', 'uploaded_at'] as const;

type UploadedDocument = TolerantResponseOf<'uploadDocument'>;
interface Uploaded {
  file: UploadFile;
  data: UploadedDocument;
  json: unknown;
}

function row(document: UploadedDocument, file: UploadFile, format: Format): string[] {
  return [
    format.text(document.id),
    format.text(document.filename ?? file.filename),
    format.text(document.tax_year),
    format.bytes(document.file_size ?? file.size),
    format.text(document.file_type),
    format.date(document.uploaded_at),
  ];
}

/**
 * The contract promises only `id` in the answer to an upload. For a table, a short answer is
 * completed with `GET /documents/{id}`; if that read fails the upload still succeeded: a warning.
 */
async function completed(ctx: Context, api: ApiClient, uploaded: Uploaded): Promise<UploadedDocument> {
  const { data } = uploaded;
  if (SHOWN_FIELDS.every((field) => data[field] !== undefined && data[field] !== null)) return data;
  const id = pathId.safeParse(data.id);
  if (!id.success) return data;
  try {
    const read = await api.call('getDocument', { params: { document_id: id.data } });
    return { ...read.data, ...definedOnly(data) };
  } catch (error) {
    const reason = error instanceof CliError ? error.message : String(error);
    ctx.io.stderr.write(`warning: ${sanitizeLine(uploaded.file.filename)} was uploaded as document ${sanitizeLine(data.id)}, but reading it back failed: ${sanitizeLine(reason)}\n`);
    return data;
  }
}

/** One file: the service's document as sent. Several: a JSON array of them, in the order given. */
async function printUploaded(ctx: Context, api: ApiClient, out: Output, uploaded: Uploaded[], fileCount: number) {
  if (ctx.globals.json) {
    if (uploaded.length > 0) await out.json(fileCount === 1 ? uploaded[0]?.json : uploaded.map((item) => item.json));
    return;
  }
  const rows: string[][] = [];
  for (const item of uploaded) rows.push(row(await completed(ctx, api, item), item.file, out.format));
  if (rows.length > 0) await out.table(HEAD, rows);
}

/** `w2.pdf (id 7001), 1099.pdf (id 7002)` */
function describeUploaded(uploaded: Uploaded[]): string {
  return uploaded.map((item) => `${sanitizeLine(item.file.filename)} (id ${sanitizeLine(item.data.id ?? 'not given')})`).join(', ');
}

/** A file the service refused (or that a rule learned from an earlier file's refusal kept back): reported, and the batch goes on. */
interface Refused {
  file: UploadFile;
  error: CliError;
}

/** The service's refusal of this one file (413, 415, a 400): the next file may well be taken. */
function refusedFile(error: unknown): error is ApiError {
  return error instanceof ApiError && error.exitCode === EXIT.REJECTED && error.status !== 429;
}

function reportRefused(ctx: Context, refused: Refused): void {
  const hint = refused.error.hint === undefined ? '' : `\n${refused.error.hint}`;
  ctx.io.stderr.write(`error: ${sanitizeLine(refused.file.filename)} was not uploaded: ${sanitizeLine(refused.error.message)}${hint}\n`);
}

/**
 * Files go one after another. A file the service refuses is reported and the next one is tried
 * (one summary, exit 9), as `docs sync` does; anything else that stops the run (a network failure,
 * a refused key, Ctrl-C) stops it, and the uploads the service acknowledged are printed and named
 * with their ids first, so that a re-run can leave them out instead of storing them twice.
 */
export async function run(ctx: Context, options: UploadOptions): Promise<number> {
  const ruleOf = await knownRuleCheck(ctx);
  const files = await checkFiles(options.paths, ruleOf);
  const out = createOutput(ctx);
  const api = await ctx.api();
  const interrupted = ctx.interrupted();
  if (!options.allowDuplicate) await checkNotStored(ctx, api, options, files, interrupted);
  const progress = await openFileSetProgress(ctx, {
    files: files.length,
    bytes: files.reduce((sum, file) => sum + file.size, 0),
    keepFinished: true,
  });
  const uploaded: Uploaded[] = [];
  const refused: Refused[] = [];
  for (const [index, file] of files.entries()) {
    let sending = false;
    const fileProgress = progress.start(file.filename, file.size);
    // A rule learned from an earlier file's refusal in this run.
    const problem = index === 0 ? undefined : await ruleOf(file.filename, file.size);
    if (problem !== undefined) {
      fileProgress.failed();
      refused.push({ file, error: new UsageError(`${sanitizeLine(file.filename)} ${problem}; it was not sent`) });
      reportRefused(ctx, refused.at(-1)!);
      continue;
    }
    try {
      if (interrupted.aborted) throw interrupted.reason;
      sending = true;
      const response = await api.upload(options.accountId, file, options.fields, { onProgress: (sent) => fileProgress.sent(sent), signal: interrupted });
      fileProgress.done();
      uploaded.push({ file, data: response.data, json: response.json });
    } catch (error) {
      fileProgress.failed();
      const stopped = interrupted.aborted;
      if (!stopped && files.length > 1 && refusedFile(error)) {
        refused.push({ file, error });
        reportRefused(ctx, refused.at(-1)!);
        continue;
      }
      progress.finish();
      await printUploaded(ctx, api, out, uploaded, files.length);
      const notTried = files.slice(index + 1).map((rest) => sanitizeLine(rest.filename));
      const done = uploaded.length > 0 ? `: ${describeUploaded(uploaded)}` : '';
      const current = sanitizeLine(file.filename);
      const rest = notTried.length > 0 ? `; not uploaded: ${notTried.join(', ')}` : '';
      const failed = refused.length > 0 ? `; refused: ${refused.map((item) => sanitizeLine(item.file.filename)).join(', ')}` : '';
      if (stopped) {
        const wasSending = sending ? `${current} was being sent and may have been stored (check \`taxprep docs list ${options.accountId}\`)` : `not uploaded: ${current}`;
        throw new InterruptedError(`interrupted: uploaded ${uploaded.length} of ${files.length} files${done}${failed}; ${wasSending}${rest}`);
      }
      if (files.length > 1) await out.note(`Uploaded ${uploaded.length} of ${files.length} files${done}${failed}; ${current} failed${rest}.`);
      throw error;
    }
  }
  progress.finish();
  await printUploaded(ctx, api, out, uploaded, files.length);
  if (files.length === 1) return EXIT.OK;
  const failed = refused.length > 0 ? `; refused: ${refused.map((item) => sanitizeLine(item.file.filename)).join(', ')}` : '';
  await out.note(`Uploaded ${uploaded.length} of ${files.length} files${uploaded.length > 0 ? `: ${describeUploaded(uploaded)}` : ''}${failed}.`);
  return refused.length > 0 ? EXIT.PARTIAL : EXIT.OK;
}
