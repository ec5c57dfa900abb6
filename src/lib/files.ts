import { randomBytes } from 'node:crypto';
import { open, rename, unlink, writeFile, type FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';

/** How a file being written ends; one found later is the leftover of an interrupted write. */
export const TEMPORARY_SUFFIX = '.partial';

/**
 * Replaces `path` whole or not at all, as a private file (0600): the content goes to a temporary
 * file beside it, renamed over it once complete, so a crash leaves the old file or the new one
 * (and at most a `<path>.<random>.partial` to clean up). `durable` also flushes the file and then
 * the directory to the disk, so the new file survives a power cut; files in a directory that does
 * not outlive the process skip it. A failing content (an async iterable that throws) leaves no trace.
 */
export async function writeFileAtomically(path: string, content: string | Uint8Array | AsyncIterable<Uint8Array>, options: { durable: boolean }): Promise<void> {
  await (await stageFileAtomically(path, content, options)).commit();
}

/** A file written beside its place and not yet renamed over it. */
export interface StagedFile {
  /** Renames it into place (then flushes the directory when durable). */
  commit(): Promise<void>;
}

/**
 * The first half of `writeFileAtomically`: the content is complete (and flushed when durable) in a
 * temporary file, and only `commit` puts it in place, so that a caller can do something in between
 * (print what the new file records) and leave the smallest window for a kill.
 */
export async function stageFileAtomically(path: string, content: string | Uint8Array | AsyncIterable<Uint8Array>, options: { durable: boolean }): Promise<StagedFile> {
  const temporaryPath = `${path}.${randomBytes(4).toString('hex')}${TEMPORARY_SUFFIX}`;
  const file = await open(temporaryPath, 'wx', 0o600);
  try {
    await writeFile(file, content);
    if (options.durable) await file.sync();
    await file.close();
  } catch (error) {
    await file.close().catch(() => {});
    await unlink(temporaryPath).catch(() => {});
    throw error;
  }
  return {
    async commit() {
      try {
        await rename(temporaryPath, path);
      } catch (error) {
        await unlink(temporaryPath).catch(() => {});
        throw error;
      }
      if (options.durable) await syncDirectory(dirname(path));
    },
  };
}

/**
 * Appends `data` at the end of an open file and, when `durable`, waits until it is on the disk
 * (fdatasync: the data and the new length, enough to read it back after a power cut). The one seam
 * appends go through, so that a test can fill the disk here as for `writeFileAtomically`.
 */
export async function appendToFile(file: FileHandle, data: Uint8Array, options: { durable: boolean }): Promise<void> {
  for (let written = 0; written < data.length; ) {
    const { bytesWritten } = await file.write(data, written, data.length - written);
    written += bytesWritten;
  }
  if (options.durable) await file.datasync();
}

/**
 * Lines gathered into chunks of about `chunkBytes` for the disk (a ledger's compaction, the mock's
 * snapshot): one write per chunk rather than per line, and never one string of a whole file, which
 * could pass V8's longest string. `count` is told each chunk's size in bytes.
 */
export async function* linesInChunks(lines: Iterable<string> | AsyncIterable<string>, chunkBytes: number, count?: (bytes: number) => void): AsyncIterable<Uint8Array> {
  let pending: string[] = [];
  let size = 0;
  const chunk = () => {
    const bytes = Buffer.from(pending.join(''), 'utf8');
    count?.(bytes.length);
    pending = [];
    size = 0;
    return bytes;
  };
  for await (const line of lines) {
    pending.push(line);
    size += line.length;
    if (size >= chunkBytes) yield chunk();
  }
  if (pending.length > 0) yield chunk();
}

/** Makes a rename durable. Some platforms cannot open a directory for this; their renames are. */
async function syncDirectory(directory: string): Promise<void> {
  let handle;
  try {
    handle = await open(directory, 'r');
    await handle.sync();
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code !== 'EISDIR' && code !== 'EPERM' && code !== 'EINVAL' && code !== 'EBADF') throw error;
  } finally {
    await handle?.close();
  }
}
