import { fchmodSync, fstatSync } from 'node:fs';
import type { Writable } from 'node:stream';

/**
 * Login links are credentials, so a file they are written to is made private (0600) when taxprep
 * is the one starting it: stdout redirected into an empty regular file of this user
 * (`> links.ndjson`, or `>> links.ndjson` on the first run), which the shell created with its
 * umask, typically 0644. A file that already holds data keeps the mode its owner gave it.
 */
export function keepOutputPrivate(stdout: Writable): void {
  const fd = (stdout as Writable & { fd?: unknown }).fd;
  if (typeof fd !== 'number' || process.getuid === undefined) return;
  try {
    const stats = fstatSync(fd);
    if (stats.isFile() && stats.size === 0 && stats.uid === process.getuid() && (stats.mode & 0o077) !== 0) fchmodSync(fd, 0o600);
  } catch {
    // Not a file we may change (a descriptor of another kind, a read-only mount): the links still go out.
  }
}
