import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXIT } from '../../src/errors';
import { makeHome, runMain } from '../helpers/cli';
import { startMock, type RunningMock } from '../helpers/mock';

/**
 * Outputs that were cut or broken on a terminal of 80 columns (issue 32, item 6), each at 60, 80
 * and 120 columns: no line wider than the terminal, and what a user copies (a URL, an id, a
 * timestamp) there whole, as one word once a wrapped cell's lines are read in order.
 */
const WIDTHS = [60, 80, 120];

function expectFits(text: string, columns: number): void {
  for (const line of text.trimEnd().split('\n')) expect([...line].length, line).toBeLessThanOrEqual(columns);
}

/** Wrapped text read back as one line: its words joined by single spaces. */
function unwrapped(text: string): string {
  return text.trim().split(/\s+/).join(' ');
}

let mock: RunningMock;
beforeAll(async () => {
  mock = await startMock({ rateLimits: [] });
});
afterAll(() => mock.close());

describe('a validation error answered to taxprep api, on a terminal', () => {
  it.each(WIDTHS)('at %i columns wraps the error body between words, never inside one', async (columns) => {
    const env = { TAXPREP_BASE_URL: mock.baseUrl, TAXPREP_API_KEY: mock.keys.acme };
    const { exitCode, stdout, stderr } = await runMain(['api', 'POST', '/accounts', '-f', 'email=x'], { env, tty: true, columns });
    expect(exitCode).toBe(EXIT.REJECTED);
    expect(stdout).toBe('');
    expectFits(stderr, columns);
    expect(unwrapped(stderr)).toContain('"message": "The request body is invalid: email must be a valid email address; first_name is required; last_name is required."');
    expect(unwrapped(stderr)).toContain('"first_name": [ "is required" ]');
  });
});

describe('hooks list', () => {
  const home = makeHome();
  const env = { TAXPREP_BASE_URL: 'http://127.0.0.1:9/v1beta', TAXPREP_API_KEY: 'tpk_cutAtWidthTestKey000000000001' };
  const url = 'http://127.0.0.1:8765/hooks/taxprep-receiver';

  it.each(WIDTHS)('at %i columns keeps the receiver URL whole, wrapped in its cell, never cut', async (columns) => {
    if (columns === WIDTHS[0]) expect((await runMain(['hooks', 'add', url, '--insecure-storage'], { env, home })).exitCode).toBe(0);
    const { exitCode, stdout } = await runMain(['hooks', 'list'], { env: { ...env, TAXPREP_FORCE_TTY: String(columns) }, home });
    expect(exitCode).toBe(0);
    expectFits(stdout, columns);
    expect(stdout).not.toContain('…');
    // The TARGET column's lines, read in order, spell the URL.
    const lines = stdout.split('\n');
    const start = lines[0]!.indexOf('TARGET');
    const cell = lines.slice(1).map((line) => line.slice(start).split(/\s{2,}/)[0]!.trim()).filter((piece) => piece.length > 0 && !piece.startsWith('('));
    expect(cell.join('')).toContain(url);
  });
});

describe('docs sync, a file changed since it was uploaded', () => {
  it.each(WIDTHS)('at %i columns wraps the conflict between words, under its own text, the path and code whole', async (columns) => {
    const env = { TAXPREP_BASE_URL: mock.baseUrl, TAXPREP_API_KEY: mock.keys.acme, NO_COLOR: '1' };
    const home = makeHome();
    const dir = mkdtempSync(join(tmpdir(), 'taxprep-cut-sync-'));
    const path = `1001/2025/w2-at-${columns}.pdf`;
    mkdirSync(join(dir, '1001', '2025'), { recursive: true });
    writeFileSync(join(dir, path), 'w2');
    expect((await runMain(['docs', 'sync', dir], { env, home })).exitCode).toBe(0);
    const document = mock.deps.store.state.documents.find((each) => each.filename === `w2-at-${columns}.pdf`)!.id;
    writeFileSync(join(dir, path), 'w2, corrected');
    const { exitCode, stdout } = await runMain(['docs', 'sync', dir], { env, home, tty: true, columns });
    expect(exitCode).toBe(EXIT.PARTIAL);
    expectFits(stdout, columns);
    expect(stdout).toMatch(new RegExp(`^conflict  ${path}  DOCUMENT_CONFLICT  `));
    expect(unwrapped(stdout)).toBe(`conflict ${path} DOCUMENT_CONFLICT content differs from what was uploaded under this name (document ${document}); pass --upload-changed to upload it`);
  });
});
