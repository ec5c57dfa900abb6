import { describe, expect, it } from 'vitest';
import { DEMO_API_KEYS } from '../../src/mock/seed';
import { findSecrets, runCli } from '../helpers/cli';

/** The scanner that every `runCli` call applies: proof that it catches a key printed in full. */
describe('the API key scanner', () => {
  it('finds a known key anywhere in the output, and reports it redacted', () => {
    const found = findSecrets(`Authorization: Bearer ${DEMO_API_KEYS.acme}\n`);
    expect(found).toEqual(['tpk_…0001']);
  });

  it('finds a key it was not told about, by its shape', () => {
    expect(findSecrets('key=tpk_ABCDEFGHIJKLMNOPQRSTUVWX', [])).toEqual(['tpk_…UVWX']);
  });

  it('lets a redacted key and key-like text that is too short pass', () => {
    expect(findSecrets(`key: tpk_…0001, prefix tpk_short`, Object.values(DEMO_API_KEYS))).toEqual([]);
  });

  it('fails the run of a command that prints a key-shaped string', async () => {
    // The file name is echoed in the "does not exist" message: the scanner must catch it.
    const leakyPath = '/nonexistent/tpk_AAAAAAAAAAAAAAAAAAAAAAAA.pdf';
    await expect(runCli(['docs', 'upload', '1001', leakyPath, '--tax-year', '2024'])).rejects.toThrow(
      /printed an API key in full: tpk_…AAAA/,
    );
  });

  it('passes a run whose output shows the key only redacted', async () => {
    const result = await runCli(['accounts', 'get', DEMO_API_KEYS.acme]);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain('tpk_…0001');
  });
});
