import { closeSync, ftruncateSync, openSync } from 'node:fs';
import { join } from 'node:path';

/** A file of `bytes` in `directory` that takes no disk and no memory: a sparse file, read back as zeros (an upload over a service's limit). */
export function sparseFile(directory: string, name: string, bytes: number): string {
  const path = join(directory, name);
  const fd = openSync(path, 'w');
  ftruncateSync(fd, bytes);
  closeSync(fd);
  return path;
}
