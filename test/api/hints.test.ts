import { readFileSync } from 'node:fs';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { apiErrorFrom, hintFor, networkErrorFrom } from '../../src/api/errors';
import type { NetworkFailureKind } from '../../src/api/retry';
import { notStoredHint } from '../../src/commands/profiles/add';
import { walkLayout } from '../../src/commands/docs/lib/syncSources';
import { ApiError, CliError, NotTheApiError, UsageError } from '../../src/errors';

/**
 * Issue 21, case 8: every hint checked against its cause. One row per hint the code gives by error
 * code or local failure: what the hint must say, and advice that would not fit the cause.
 */

const context = { keySource: 'profile "acme"', baseUrl: 'https://api.example.com/v1beta' };

/** [code, status, details, must contain, must not contain] */
const SERVICE_HINTS: Array<[string, number, Record<string, unknown> | undefined, string, string[]]> = [
  ['INVALID_API_KEY', 401, undefined, 'The key from profile "acme" was refused', ['expired']],
  ['EXPIRED_API_KEY', 401, undefined, 'has expired. Ask the service operator for a new key', ['paste it again', 'refused']],
  ['INSUFFICIENT_PERMISSIONS', 403, { required_permission: 'accounts:write' }, 'lacks the accounts:write permission', ['paste']],
  ['ACCESS_DENIED', 403, { account_id: 2001 }, 'Check the id, and that this is the right profile', ['belongs to another partner']],
  ['ACCOUNT_SUSPENDED', 403, { account_id: 1003, status: 'suspended', contact_support: true }, 'Contact support to reactivate it', ['profile']],
  ['RATE_LIMIT_EXCEEDED', 429, { reset_at: '2026-11-24T00:00:00Z' }, 'used up until 2026-11-24T00:00:00Z', ['key was refused']],
  ['DUPLICATE_EMAIL', 409, { email: 'a@b.co', existing_account_id: 1001 }, '`taxprep accounts get 1001`', ['profile']],
  ['INTERNAL_ERROR', 500, undefined, 'The service failed. Try again later', ['key']],
];

describe('hints by the service error code', () => {
  it.each(SERVICE_HINTS)('%s', (code, status, details, says, never) => {
    const hint = hintFor(status, { error: { code, message: 'm', ...(details ? { details } : {}) } }, context);
    expect(hint).toContain(says);
    for (const wrong of never) expect(hint).not.toContain(wrong);
  });

  it('has a row for every code hintFor answers', () => {
    const source = readFileSync(new URL('../../src/api/errors.ts', import.meta.url), 'utf8');
    const body = source.slice(source.indexOf('export function hintFor'), source.indexOf('export const NOT_THE_API_MESSAGE'));
    const cases = [...body.matchAll(/case '([A-Z_]+)'/g)].map((match) => match[1]);
    expect(cases.sort()).toEqual(SERVICE_HINTS.map(([code]) => code).filter((code) => code !== 'INTERNAL_ERROR').sort());
  });

  it('ACCESS_DENIED: the hint does not repeat what the message says', () => {
    const error = apiErrorFrom(403, JSON.stringify({ error: { code: 'ACCESS_DENIED', message: 'Account 2001 belongs to another partner.', details: { account_id: 2001 } } }), context);
    expect(error.hint).not.toMatch(/belongs to another partner/i);
  });

  it('a 404 without a kind of record from a base URL without /v1beta: the wrong base URL, named as given (exit 11)', () => {
    const noRoute = JSON.stringify({ error: { code: 'NOT_FOUND', message: 'No route GET /accounts/1001.' } });
    const error = apiErrorFrom(404, noRoute, { ...context, baseUrl: 'http://127.0.0.1:4010' });
    expect(error).toBeInstanceOf(NotTheApiError);
    expect(error.message).toContain('should end in /v1beta');
    expect(error.hint).toContain('http://127.0.0.1:4010 answered HTTP 404');
    // The same answer under /v1beta may be a contract-keeping server's code for an unknown record (the contract leaves it open).
    expect(apiErrorFrom(404, noRoute, context)).toBeInstanceOf(ApiError);
    expect(apiErrorFrom(404, JSON.stringify({ error: { code: 'ACCOUNT_NOT_FOUND', message: 'no', details: { account_id: 1 } } }), { ...context, baseUrl: 'http://127.0.0.1:4010' })).toBeInstanceOf(ApiError);
  });
});

describe('hints by local failure', () => {
  const NETWORK_HINTS: Array<[NetworkFailureKind, string]> = [
    ['refused', 'Check the base URL with `taxprep whoami`'],
    ['connect-timeout', 'Check the base URL with `taxprep whoami`'],
    ['dns', 'Check the base URL with `taxprep whoami`'],
    ['other', 'Check the base URL with `taxprep whoami`'],
    ['timeout', 'Raise --timeout (e.g. --timeout 2m)'],
    ['reset', 'a request that changes data may have been done'],
  ];
  it.each(NETWORK_HINTS)('network: %s', (kind, says) => {
    expect(networkErrorFrom(kind, 'http://127.0.0.1:1', 1000, undefined).hint).toContain(says);
  });

  const refused = (code: string) => Object.assign(new ApiError(401, { error: { code, message: 'm' } }));
  it.each<[string, CliError, 'refused' | 'failed', string, string[]]>([
    ['an expired key', refused('EXPIRED_API_KEY'), 'refused', 'ask the service operator for a new key', ['paste it again', '--no-verify']],
    ['a refused key', refused('INVALID_API_KEY'), 'refused', 'paste it again exactly as the service operator gave it', ['--no-verify', 'whoami']],
    ['an unreachable base URL', networkErrorFrom('refused', 'http://127.0.0.1:1', 1000, undefined), 'failed', 'Check that http://127.0.0.1:1/v1beta is the service', ['whoami']],
    ['a slow service', networkErrorFrom('timeout', 'http://127.0.0.1:1', 1000, undefined), 'failed', 'Raise --timeout', ['whoami']],
  ])('profiles add: %s', (_name, error, result, says, never) => {
    const hint = notStoredHint(error, result, 'http://127.0.0.1:1/v1beta');
    expect(hint).toContain(says);
    for (const wrong of never) expect(hint).not.toContain(wrong);
  });

  it('docs sync of a folder that does not exist: no --exclude or --skip-invalid advice', async () => {
    const missing = join(mkdtempSync(join(tmpdir(), 'hints-')), 'nonexistent');
    const error = await walkLayout(missing, []).then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
    expect(error).toBeInstanceOf(UsageError);
    expect((error as UsageError).message).toBe(`${missing} does not exist; nothing was sent`);
    expect((error as UsageError).hint).not.toMatch(/--exclude|--skip-invalid/);
  });
});
