import { constants } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import { basename, extname } from 'node:path';
import type { TolerantResponseOf } from '../../api/tolerant';
import type { ApiClient, UploadFile } from '../../api/types';
import { DocumentUploadFields } from '../../contract/requests';
import { pathId } from '../../contract/rules';
import type { Context } from '../../types';
import { CliError, InterruptedError, UsageError } from '../../errors';
import { createOutput, dateColumn, fileName, label, type Format, type Output } from '../../output';
import { progressBar } from '../../output/progress';
import { sanitizeLine } from '../../output/sanitize';
import { truncate } from '../../output/table';
import { definedOnly, parseFlagFields, parseId } from '../parseFlags';
import type { RawInvocation } from '../types';
import { uploadDocuments } from './register';

export interface UploadOptions {
  accountId: number;
  paths: string[];
  fields: { tax_year: number; description?: string };
}

export function parseOptions(raw: RawInvocation): UploadOptions {
  const [accountId, paths] = raw.args;
  const fields = parseFlagFields(DocumentUploadFields, uploadDocuments.flags!, raw.flags);
  return {
    accountId: parseId(accountId, '<account-id>'),
    paths: Array.isArray(paths) ? paths.map(String) : [],
    fields,
  };
}

/** Media types by extension, the common forms of tax paperwork; anything else goes as octet-stream. */
const MEDIA_TYPE_OF_EXTENSION: Record<string, string> = {
  '.pdf': 'application/pdf',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.png': 'image/png',
  '.heic': 'image/heic',
  '.heif': 'image/heif',
  '.tif': 'image/tiff',
  '.tiff': 'image/tiff',
  '.webp': 'image/webp',
  '.txt': 'text/plain',
  '.csv': 'text/csv',
  '.xls': 'application/vnd.ms-excel',
  '.xlsx': 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  '.doc': 'application/msword',
  '.docx': 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
};

export function mediaTypeOf(path: string): string {
  return MEDIA_TYPE_OF_EXTENSION[extname(path).toLowerCase()] ?? 'application/octet-stream';
}

/**
 * Checks every file before the first upload, so that a typo in the third name does not leave the
 * first two uploaded: each must exist, be a regular file and be readable.
 */
export async function checkFiles(paths: string[]): Promise<UploadFile[]> {
  const problems: Record<string, string[]> = {};
  const files: UploadFile[] = [];
  for (const path of paths) {
    const problem = await fileProblem(path);
    if (problem !== undefined) {
      problems[path] = [problem];
      continue;
    }
    const { size } = await stat(path);
    files.push({ path, filename: basename(path), contentType: mediaTypeOf(path), size });
  }
  const failed = Object.entries(problems);
  if (failed.length > 0) {
    const list = failed.map(([path, [problem]]) => `${sanitizeLine(path)} ${problem}`).join('; ');
    throw new UsageError(`nothing was uploaded: ${list}`, { details: problems });
  }
  return files;
}

async function fileProblem(path: string): Promise<string | undefined> {
  try {
    const info = await stat(path);
    if (!info.isFile()) return info.isDirectory() ? 'is a directory, not a file' : 'is not a regular file';
    await access(path, constants.R_OK);
    return undefined;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return 'does not exist';
    if (code === 'EACCES' || code === 'EPERM') return 'cannot be read (permission denied)';
    return `cannot be read (${code ?? 'unknown error'})`;
  }
}

/**
 * Redraws one stderr line per file (`w2.pdf ████░░░░░░  45%`), only when the percentage moves,
 * never wider than the terminal (a wider line would wrap and scroll on every redraw), and wiped
 * when the upload fails so that no stale bar is left above the error.
 */
async function progressLine(ctx: Context, file: UploadFile): Promise<{ update(sent: number): void; done(): void; clear(): void } | undefined> {
  if (!ctx.io.stderrIsTTY || ctx.globals.json) return undefined;
  // Display width, as the tables measure it: a CJK file name takes two columns a character.
  const { default: stringWidth } = await import('string-width');
  const barWidth = progressBar(100).length + 1;
  // The bar is drawn on stderr, whose width may differ from stdout's (`| less`, `> file`); a
  // terminal that reports no size (0) gets the usual default.
  const reported = (ctx.io.stderr as { columns?: number }).columns;
  const columns = reported !== undefined && reported > 0 ? reported : ctx.io.columns;
  const name = truncate(sanitizeLine(file.filename), Math.max(1, columns - 1 - barWidth), stringWidth);
  let shown = -1;
  const draw = (percent: number) => {
    if (percent === shown) return;
    shown = percent;
    ctx.io.stderr.write(`\r${name} ${progressBar(percent)}${CLEAR_TO_END_OF_LINE}`);
  };
  return {
    update: (sent) => draw(file.size === 0 ? 100 : Math.floor((sent / file.size) * 100)),
    done: () => {
      draw(100);
      ctx.io.stderr.write('\n');
    },
    clear: () => {
      if (shown >= 0) ctx.io.stderr.write(`\r${CLEAR_TO_END_OF_LINE}`);
    },
  };
}

const CLEAR_TO_END_OF_LINE = '\u001b[K';
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
  const uploaded: Uploaded[] = [];
  for (const [index, file] of files.entries()) {
    const progress = await progressLine(ctx, file);
    let sending = false;
    try {
      if (interrupted.aborted) throw interrupted.reason;
      sending = true;
      const response = await api.upload(options.accountId, file, options.fields, { onProgress: progress?.update, signal: interrupted });
      progress?.done();
      uploaded.push({ file, data: response.data, json: response.json });
    } catch (error) {
      progress?.clear();
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
  await printUploaded(ctx, api, out, uploaded, files.length);
  if (files.length > 1) await out.note(`Uploaded ${uploaded.length} of ${files.length} files: ${describeUploaded(uploaded)}.`);
}
