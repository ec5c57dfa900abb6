import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Every temporary directory the tests make (homes, config and data directories, ledgers, files
 * to upload) goes under one directory for the run, removed when the run ends: the test processes
 * inherit TMPDIR, and `os.tmpdir()` reads it.
 */
export default function setup(): () => void {
  const root = mkdtempSync(join(tmpdir(), 'taxprep-tests-'));
  process.env.TMPDIR = root;
  return () => rmSync(root, { recursive: true, force: true });
}
