import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Every temporary directory the tests make (homes, config and data directories, ledgers, files
 * to upload) goes under one directory for the run, removed when the run ends: the test processes
 * inherit TMPDIR, and `os.tmpdir()` reads it. The CLI's compiled-code cache goes there too, so a
 * run of the tests never writes into the user's own cache directory.
 */
export default function setup(): () => void {
  const root = mkdtempSync(join(tmpdir(), 'taxprep-tests-'));
  process.env.TMPDIR = root;
  process.env.XDG_CACHE_HOME = join(root, 'cache');
  return () => rmSync(root, { recursive: true, force: true });
}
