import { randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { readdir, rename, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
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
  /** Removes temporary files of interrupted writes. */
  removeLeftovers(): Promise<void>;
}

const TEMPORARY_SUFFIX = '.partial';
// Blob names are made here or by the seed (`seed-<run>-<id>`): never a path, never the client's filename.
const BLOB_NAME = /^[A-Za-z0-9-]{1,100}$/;

/**
 * `durable` flushes every file to the disk before it is renamed (a data directory); an in-memory
 * store's temporary directory does not outlive the process, so it skips the flush.
 */
export function createBlobStore(directory: string, options: { durable: boolean }): DirectoryBlobStore {
  const pathOf = (blob: string) => {
    if (!BLOB_NAME.test(blob)) throw new Error(`invalid blob name ${JSON.stringify(blob)}`);
    return join(directory, blob);
  };

  async function writeFrom(blob: string, source: Readable, maxBytes: number): Promise<number> {
    const finalPath = pathOf(blob);
    const temporaryPath = `${finalPath}.${randomBytes(4).toString('hex')}${TEMPORARY_SUFFIX}`;
    let size = 0;
    const counter = new Transform({
      transform(chunk: Buffer, _encoding, callback) {
        size += chunk.length;
        callback(size > maxBytes ? new BlobTooLargeError(maxBytes) : null, chunk);
      },
    });
    try {
      // `flush` syncs the file to the disk before it is closed, so the rename publishes a whole file.
      await pipeline(source, counter, createWriteStream(temporaryPath, { flags: 'wx', mode: PRIVATE_FILE_MODE, flush: options.durable }));
      await rename(temporaryPath, finalPath);
      return size;
    } catch (error) {
      await unlink(temporaryPath).catch(() => {});
      throw error;
    }
  }

  return {
    directory,
    async write(source, maxBytes) {
      const blob = randomBytes(16).toString('hex');
      const size = await writeFrom(blob, source, maxBytes);
      return { blob, size };
    },
    async writeNamed(blob, content) {
      await writeFrom(blob, Readable.from([content]), content.length);
    },
    read: (blob) => createReadStream(pathOf(blob)),
    async remove(blob) {
      await unlink(pathOf(blob)).catch(ignoreMissing);
    },
    async list() {
      const names = await readdir(directory);
      return names.filter((name) => BLOB_NAME.test(name));
    },
    async removeLeftovers() {
      const leftovers = (await readdir(directory)).filter((name) => name.endsWith(TEMPORARY_SUFFIX));
      await Promise.all(leftovers.map((name) => unlink(join(directory, name)).catch(ignoreMissing)));
    },
  };
}

export function ignoreMissing(error: unknown): void {
  if ((error as { code?: unknown }).code !== 'ENOENT') throw error;
}
