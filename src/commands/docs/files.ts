import { constants } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import { basename } from 'node:path';
import type { TolerantItemOf } from '../../api/tolerant';
import type { ApiClient, UploadFile } from '../../api/types';
import { pacedPages, type RateLimitPacer } from '../../batch/pacer';
import { safeDocumentFilename } from '../../contract/uploads';
import { ruleProblem, sentMediaType, uploadRulesOf } from '../../api/uploadRules';
import { formatBytes } from '../../output/progress';
import type { Context } from '../../types';

/**
 * What `docs upload` and `docs sync` check of a file before anything is sent, and what they ask the
 * service about the documents an account already has. The contract does not show the service's
 * size limit or file types: a file is refused before sending only by a rule known for this profile
 * and base URL (src/api/uploadRules.ts); otherwise the service decides.
 */

/** Why the file at `path` cannot be read as one regular file, or undefined when it can. */
export async function unreadableProblem(path: string): Promise<string | undefined> {
  try {
    const info = await stat(path);
    if (!info.isFile()) return info.isDirectory() ? 'is a directory, not a file' : 'is not a regular file';
    await access(path, constants.R_OK);
    return undefined;
  } catch (error) {
    return fileErrorProblem(error);
  }
}

/** A file system failure in words: `does not exist`, `cannot be read (permission denied)`. */
export function fileErrorProblem(error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'ENOENT') return 'does not exist';
  if (code === 'EACCES' || code === 'EPERM') return 'cannot be read (permission denied)';
  if (code === 'ELOOP') return 'is a symbolic link that loops';
  return `cannot be read (${code ?? 'unknown error'})`;
}

/** Why a rule known for this profile and base URL refuses a file (`(filename, size) => problem`), read afresh at each call: a rule learned mid-batch counts for the files after it. */
export type RuleCheck = (filename: string, size: number) => Promise<string | undefined>;

export async function knownRuleCheck(ctx: Context): Promise<RuleCheck> {
  const [settings, learned] = await Promise.all([ctx.settings(), ctx.learned()]);
  return async (filename, size) => ruleProblem(uploadRulesOf(settings, await learned.read()), filename, size, formatBytes);
}

/** The upload of the file at `path` as the service will name it, with its media type from taxprep's table (else `application/octet-stream`). */
export function uploadFileOf(path: string, size: number): UploadFile {
  const filename = basename(path);
  return { path, filename, contentType: sentMediaType(filename), size };
}

export type ListedDocument = TolerantItemOf<'listDocuments'>;

/** The key under which the service keeps a file's name: the stored form of a name, so `./w2.pdf` and `w2.pdf` meet. */
export function storedNameKey(filename: string): string {
  return safeDocumentFilename(filename);
}

/**
 * The account's documents of one tax year by stored name, each name's newest first (the list's
 * order), read page by page (through the pacer of a batch when given one). A row of another year from a service that ignores the filter is
 * dropped by the client; a row without a year is kept, since the filter returned it.
 */
export async function documentsByName(
  api: ApiClient,
  accountId: number,
  taxYear: number,
  options: { signal?: AbortSignal; pacer?: RateLimitPacer } = {},
): Promise<Map<string, ListedDocument[]>> {
  const byName = new Map<string, ListedDocument[]>();
  const pages = api.pages('listDocuments', { params: { account_id: accountId }, query: { tax_year: taxYear }, signal: options.signal });
  for await (const page of options.pacer === undefined ? pages : pacedPages(options.pacer, pages, options.signal)) {
    for (const document of page.data.documents) {
      if (typeof document.filename !== 'string') continue;
      const key = storedNameKey(document.filename);
      byName.set(key, [...(byName.get(key) ?? []), document]);
    }
  }
  return byName;
}
