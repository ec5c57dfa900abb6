import { stat } from 'node:fs/promises';
import type { TolerantResponseOf } from '../../api/tolerant';
import type { ApiClient, UploadFile } from '../../api/types';
import { openFileSetProgress } from '../../batch/fileSetProgress';
import { DocumentUploadFields } from '../../contract/requests';
import { documentMediaTypeOf } from '../../contract/uploads';
import { pathId } from '../../contract/rules';
import type { Context } from '../../types';
import { CliError, InterruptedError, UsageError } from '../../errors';
import { createOutput, dateColumn, fileName, label, type Format, type Output } from '../../output';
import { sanitizeLine } from '../../output/sanitize';
import { definedOnly, parseFlagFields, parseId } from '../parseFlags';
import type { RawInvocation } from '../types';
import { ACCEPTED_EXTENSIONS, contentProblem, documentsByName, storedNameKey, unreadableProblem, uploadFileOf } from './files';
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

/** `nothing was uploaded: a.rtf is of a type ...; b.pdf does not exist`, naming every file at fault. */
function refuseFiles(problems: Array<[string, string]>, options: { listAccepted?: boolean; hint?: string }): UsageError {
  const list = problems.map(([path, problem]) => `${sanitizeLine(path)} ${problem}`).join('; ');
  const details: Record<string, string[]> = {};
  for (const [path, problem] of problems) (details[path] ??= []).push(problem);
  return new UsageError(`nothing was uploaded: ${list}${options.listAccepted ? ` (${ACCEPTED_EXTENSIONS})` : ''}`, { details, hint: options.hint });
}

/**
 * Checks every file before the first upload, so that a typo or an unsupported file in the third
 * name does not leave the first two uploaded: each must exist, be a regular readable file, be of a
 * type the service takes and within its size limit, and no two may be stored under one name.
 */
export async function checkFiles(paths: string[]): Promise<UploadFile[]> {
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
    const problem = contentProblem(file.filename, file.size);
    const first = pathOfName.get(storedNameKey(file.filename));
    if (problem !== undefined) problems.push([path, problem]);
    else if (first !== undefined) problems.push([path, `would be stored under the same name as ${sanitizeLine(first)}`]);
    pathOfName.set(storedNameKey(file.filename), path);
    files.push(file);
  }
  if (problems.length > 0) throw refuseFiles(problems, { listAccepted: files.some((file) => documentMediaTypeOf(file.filename) === undefined) });
  return files;
}

/**
 * Refuses files whose name the account already has for the tax year (gh's `release upload`
 * refuses an existing asset unless `--clobber`): a second upload would be a second document.
 */
async function checkNotStored(api: ApiClient, options: UploadOptions, files: UploadFile[], signal: AbortSignal): Promise<void> {
  const stored = await documentsByName(api, options.accountId, options.fields.tax_year, { signal });
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

/**
 * Files go one after another. Whatever stops the run (a refused file, Ctrl-C), the uploads that
 * the service acknowledged are printed and named with their ids first, so that a re-run can leave
 * them out instead of storing them twice.
 */
export async function run(ctx: Context, options: UploadOptions): Promise<void> {
  const files = await checkFiles(options.paths);
  const out = createOutput(ctx);
  const api = await ctx.api();
  const interrupted = ctx.interrupted();
  if (!options.allowDuplicate) await checkNotStored(api, options, files, interrupted);
  const progress = await openFileSetProgress(ctx, {
    files: files.length,
    bytes: files.reduce((sum, file) => sum + file.size, 0),
    keepFinished: true,
  });
  const uploaded: Uploaded[] = [];
  for (const [index, file] of files.entries()) {
    let sending = false;
    const fileProgress = progress.start(file.filename, file.size);
    try {
      if (interrupted.aborted) throw interrupted.reason;
      sending = true;
      const response = await api.upload(options.accountId, file, options.fields, { onProgress: (sent) => fileProgress.sent(sent), signal: interrupted });
      fileProgress.done();
      uploaded.push({ file, data: response.data, json: response.json });
    } catch (error) {
      fileProgress.failed();
      progress.finish();
      const stopped = interrupted.aborted;
      await printUploaded(ctx, api, out, uploaded, files.length);
      const notTried = files.slice(index + 1).map((rest) => sanitizeLine(rest.filename));
      const done = uploaded.length > 0 ? `: ${describeUploaded(uploaded)}` : '';
      const current = sanitizeLine(file.filename);
      const rest = notTried.length > 0 ? `; not uploaded: ${notTried.join(', ')}` : '';
      if (stopped) {
        const wasSending = sending ? `${current} was being sent and may have been stored (check \`taxprep docs list ${options.accountId}\`)` : `not uploaded: ${current}`;
        throw new InterruptedError(`interrupted: uploaded ${uploaded.length} of ${files.length} files${done}; ${wasSending}${rest}`);
      }
      if (files.length > 1) await out.note(`Uploaded ${uploaded.length} of ${files.length} files${done}; ${current} failed${rest}.`);
      throw error;
    }
  }
  progress.finish();
  await printUploaded(ctx, api, out, uploaded, files.length);
  if (files.length > 1) await out.note(`Uploaded ${uploaded.length} of ${files.length} files: ${describeUploaded(uploaded)}.`);
}
