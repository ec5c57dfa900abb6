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

/** Wrapped text read back as one line: its lines' words joined by single spaces. */
function unwrapped(text: string): string {
  return text.split('\n').map((line) => line.trim()).filter((line) => line !== '').join(' ');
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
