import { randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { opendir, readdir, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { TEMPORARY_SUFFIX, writeFileAtomically } from '../lib/files';
import { BlobTooLargeError, type BlobStore } from './deps';

/** A data directory holds clients' documents and the view-link secret: for its owner's eyes only. */
export const PRIVATE_FILE_MODE = 0o600;
export const PRIVATE_DIRECTORY_MODE = 0o700;

/**
 * Files of documents, one per blob, in one directory. A blob is written under a temporary name
 * and renamed once complete, so a crash leaves either nothing or a whole file under its final
 * name; temporary files found later are leftovers of an interrupted write.
 */
export interface DirectoryBlobStore extends BlobStore {
  readonly directory: string;
  /** Writes a blob whose content is at hand (seed documents) under a name chosen by the caller. */
  writeNamed(blob: string, content: Buffer): Promise<void>;
  /** Names of the complete blobs in the directory. */
  list(): Promise<string[]>;
  /**
   * Removes what crashes left, without holding the directory's listing in memory: temporary files
   * of interrupted writes and blobs that `isReferenced` does not know. Blobs this store writes
   * meanwhile are left alone (an upload not yet committed is not a leftover). Stops early when
   * `stopped()` says so.
   */
  sweep(isReferenced: (blob: string) => boolean, stopped: () => boolean): Promise<void>;
}

// Blob names are made here or by the seed (`seed-<run>-<id>`): never a path, never the client's filename.
const BLOB_NAME = /^[A-Za-z0-9-]{1,100}$/;

/**
 * `durable` flushes every file to the disk (a data directory); an in-memory store's temporary
 * directory does not outlive the process, so it skips the flush.
 */
export function createBlobStore(directory: string, options: { durable: boolean }): DirectoryBlobStore {
  const pathOf = (blob: string) => {
    if (!BLOB_NAME.test(blob)) throw new Error(`invalid blob name ${JSON.stringify(blob)}`);
    return join(directory, blob);
  };

  // Blobs written while a sweep runs, which it must not take for leftovers.
  let madeDuringSweep: Set<string> | undefined;

  async function writeFrom(blob: string, source: Iterable<Buffer> | AsyncIterable<Buffer>, maxBytes: number): Promise<number> {
    madeDuringSweep?.add(blob);
    let size = 0;
    async function* counted() {
      for await (const chunk of source) {
        size += chunk.length;
        if (size > maxBytes) throw new BlobTooLargeError(maxBytes);
        yield chunk;
      }
    }
    await writeFileAtomically(pathOf(blob), counted(), options);
    return size;
  }

  return {
    directory,
    async write(source, maxBytes) {
      const blob = randomBytes(16).toString('hex');
      const size = await writeFrom(blob, source, maxBytes);
      return { blob, size };
    },
    async writeNamed(blob, content) {
      await writeFrom(blob, [content], content.length);
    },
    read: (blob) => createReadStream(pathOf(blob)),
    async remove(blob) {
      await unlink(pathOf(blob)).catch(ignoreMissing);
    },
    async list() {
      const names = await readdir(directory);
      return names.filter((name) => BLOB_NAME.test(name));
    },
    async sweep(isReferenced, stopped) {
      madeDuringSweep = new Set();
      try {
        for await (const { name } of await opendir(directory, { bufferSize: 256 })) {
          if (stopped()) break;
          // A temporary file is named after its blob: `<blob>.<random>.partial`.
          const temporary = name.endsWith(TEMPORARY_SUFFIX);
          if (madeDuringSweep.has(temporary ? name.slice(0, name.indexOf('.')) : name)) continue;
          if (temporary || (BLOB_NAME.test(name) && !isReferenced(name))) await unlink(join(directory, name)).catch(ignoreMissing);
        }
      } finally {
        madeDuringSweep = undefined;
      }
    },
  };
}

export function ignoreMissing(error: unknown): void {
  if ((error as { code?: unknown }).code !== 'ENOENT') throw error;
}
