import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli';
import { EXIT } from '../../src/errors';
import { CapturedStream } from '../helpers/context';
import { startMock, type RunningMock } from '../helpers/mock';

let mock: RunningMock;
beforeAll(async () => {
  mock = await startMock({ rateLimits: [] });
});
afterAll(() => mock.close());

/** `taxprep <argv>` in-process against the mock, with the acme key from the environment. */
async function taxprep(argv: string[], stdin = '') {
  const stdout = new CapturedStream({ isTTY: false });
  const stderr = new CapturedStream({ isTTY: false });
  const input = Object.assign(new PassThrough(), { isTTY: false });
  input.end(stdin);
  const env = { XDG_CONFIG_HOME: mkdtempSync(join(tmpdir(), 'taxprep-api-')), TAXPREP_BASE_URL: mock.baseUrl, TAXPREP_API_KEY: mock.keys.acme };
  const code = await main(argv, { env, io: { stdout, stderr, stdin: input } });
  return { code, stdout: stdout.text(), stderr: stderr.text() };
}

describe('taxprep api', () => {
  it('GET prints the JSON answer as sent', async () => {
    const result = await taxprep(['api', 'GET', '/accounts/1001']);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ id: 1001, email: 'maria.gonzalez@example.com' });
    expect(result.stderr).toBe('');
  });

  it('accepts paths with or without the version segment, and query parameters', async () => {
    const result = await taxprep(['api', 'GET', 'v1beta/deliverables', '-q', 'limit=1']);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout).deliverables).toHaveLength(1);
  });

  it('POST with typed fields', async () => {
    const result = await taxprep(['api', 'POST', '/accounts/1001/login-link', '-f', 'expiry_hours=2', '-f', 'send_notification=false', '-f', 'purpose=support_request']);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ expires_in_hours: 2, notification_sent: false, purpose: 'support_request' });
  });

  it('POST with a body from stdin or a file', async () => {
    const body = { email: `api-${Date.now()}@example.com`, first_name: 'Ada', last_name: 'Api' };
    const fromStdin = await taxprep(['api', 'POST', '/accounts', '--input', '-'], JSON.stringify(body));
    expect(fromStdin.code).toBe(0);
    expect(JSON.parse(fromStdin.stdout)).toMatchObject({ email: body.email, status: 'active' });
    const file = join(mkdtempSync(join(tmpdir(), 'taxprep-api-body-')), 'body.json');
    writeFileSync(file, JSON.stringify(body));
    const duplicate = await taxprep(['api', 'POST', '/accounts', '--input', file]);
    expect(duplicate.code).toBe(EXIT.REJECTED);
    expect(JSON.parse(duplicate.stderr).error.code).toBe('DUPLICATE_EMAIL');
  });

  it('an error answer: its body on stderr, nothing on stdout, the exit code of its class', async () => {
    const result = await taxprep(['api', 'GET', '/accounts/999999']);
    expect(result.code).toBe(EXIT.NOT_FOUND);
    expect(result.stdout).toBe('');
    expect(JSON.parse(result.stderr)).toMatchObject({ error: { code: 'ACCOUNT_NOT_FOUND' } });
  });

  it('refuses an absolute URL on another origin: the key goes nowhere else', async () => {
    const result = await taxprep(['api', 'GET', 'https://attacker.example/v1beta/accounts/1001']);
    expect(result.code).toBe(EXIT.USAGE);
    expect(result.stderr).toContain('is not the service\'s origin');
  });
});
