import { constants } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import { basename, extname } from 'node:path';
import type { UploadFile } from '../../api/types';
import { DocumentUploadFields } from '../../contract/requests';
import type { Document } from '../../contract/resources';
import type { Context } from '../../context';
import { UsageError } from '../../errors';
import { createOutput, type Format, type Output } from '../../output';
import { progressBar } from '../../output/progress';
import { sanitizeLine } from '../../output/sanitize';
import { parseFlagFields, parseId } from '../parseFlags';
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

/** Redraws one stderr line per file (`w2.pdf ████░░░░░░  45%`), only when the percentage moves. */
function progressLine(ctx: Context, file: UploadFile): { update(sent: number): void; done(): void } | undefined {
  if (!ctx.io.stderrIsTTY || ctx.globals.json) return undefined;
  const name = sanitizeLine(file.filename);
  let shown = -1;
  const draw = (percent: number) => {
    if (percent === shown) return;
    shown = percent;
    ctx.io.stderr.write(`\r${name} ${progressBar(percent)}`);
  };
  return {
    update: (sent) => draw(file.size === 0 ? 100 : Math.floor((sent / file.size) * 100)),
    done: () => {
      draw(100);
      ctx.io.stderr.write('\n');
    },
  };
}

const HEAD = ['ID', 'Filename', 'Tax year', 'Size', 'Type', 'Uploaded'];

function row(document: Document, format: Format): string[] {
  return [
    format.text(document.id),
    format.text(document.filename, 40),
    format.text(document.tax_year),
    format.bytes(document.file_size),
    format.text(document.file_type),
    format.date(document.uploaded_at),
  ];
}

/** One file: the service's document. Several: a JSON array of them, in the order given. */
async function printUploaded(ctx: Context, out: Output, uploaded: Array<{ data: Document; json: unknown }>, fileCount: number) {
  if (ctx.globals.json) {
    await out.json(fileCount === 1 ? uploaded[0]?.json : uploaded.map((item) => item.json));
  } else if (uploaded.length > 0) {
    await out.table(HEAD, uploaded.map((item) => row(item.data, out.format)));
  }
}

export async function run(ctx: Context, options: UploadOptions): Promise<void> {
  const files = await checkFiles(options.paths);
  const out = createOutput(ctx);
  const api = await ctx.api();
  const uploaded: Array<{ data: Document; json: unknown }> = [];
  for (const [index, file] of files.entries()) {
    const progress = progressLine(ctx, file);
    try {
      const response = await api.upload(options.accountId, file, options.fields, { onProgress: progress?.update });
      progress?.done();
      uploaded.push({ data: response.data, json: response.json });
    } catch (error) {
      if (progress) ctx.io.stderr.write('\n');
      if (files.length > 1) {
        await printUploaded(ctx, out, uploaded, files.length);
        const notTried = files.slice(index + 1).map((rest) => sanitizeLine(rest.filename));
        await out.note(
          `Uploaded ${uploaded.length} of ${files.length} files; ${sanitizeLine(file.filename)} failed` +
            (notTried.length > 0 ? `, not attempted: ${notTried.join(', ')}.` : '.'),
        );
      }
      throw error;
    }
  }
  await printUploaded(ctx, out, uploaded, files.length);
}
