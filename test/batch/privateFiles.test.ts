import { chmodSync, chownSync, closeSync, mkdtempSync, openSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { keepOutputPrivate } from '../../src/batch/privateFiles';

/** stdout redirected into the file at `path` (`> path`): a stream with that file's descriptor. */
function redirectedTo(path: string): { stdout: Writable; close(): void } {
  const fd = openSync(path, 'a');
  return { stdout: { fd } as unknown as Writable, close: () => closeSync(fd) };
}

const modeOf = (path: string) => statSync(path).mode & 0o777;

describe('login links sent to a file through stdout', () => {
  it('make an empty file the shell created (0644) private, 0600', () => {
    const path = join(mkdtempSync(join(tmpdir(), 'taxprep-private-')), 'links.ndjson');
    writeFileSync(path, '', { mode: 0o644 });
    chmodSync(path, 0o644);
    const out = redirectedTo(path);
    keepOutputPrivate(out.stdout);
    out.close();
    expect(modeOf(path)).toBe(0o600);
  });

  it('leave a file that already holds data as its owner made it, and a private one as it is', () => {
    const directory = mkdtempSync(join(tmpdir(), 'taxprep-private-'));
    const held = join(directory, 'held.ndjson');
    writeFileSync(held, '{"earlier":"links"}\n');
    chmodSync(held, 0o644);
    const tight = join(directory, 'tight.ndjson');
    writeFileSync(tight, '');
    chmodSync(tight, 0o400);
    for (const path of [held, tight]) {
      const out = redirectedTo(path);
      keepOutputPrivate(out.stdout);
      out.close();
    }
    expect([modeOf(held), modeOf(tight)]).toEqual([0o644, 0o400]);
  });

  // Only root can give a file to another user.
  it.skipIf(process.getuid?.() !== 0)("leave an empty file of another user as it is", () => {
    const path = join(mkdtempSync(join(tmpdir(), 'taxprep-private-')), 'theirs.ndjson');
    writeFileSync(path, '');
    chmodSync(path, 0o644);
    chownSync(path, 4321, 4321);
    const out = redirectedTo(path);
    keepOutputPrivate(out.stdout);
    out.close();
    expect(modeOf(path)).toBe(0o644);
  });

  it('leave a stream without a descriptor, and a descriptor that is not a file, alone', () => {
    expect(() => keepOutputPrivate({} as Writable)).not.toThrow();
    expect(() => keepOutputPrivate({ fd: 987_654 } as unknown as Writable)).not.toThrow();
  });
});
