import { chmodSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_API_KEYS } from '../../src/mock/seed';
import { makeHome, registerSecret, runCli } from '../helpers/cli';
import { MINIMAL_KEY, startContractMinimalServer, type MinimalServer } from '../helpers/contractMinimalServer';
import { startServeMock, type ServedMock } from '../helpers/serveMock';

/**
 * `taxprep doctor` and the key check of `profiles add`, run as a user runs them, against the mock,
 * against the contract-minimal server with its own query parameter names, and against one whose
 * clock is off. Each case has its own HOME, so profiles never leak between them.
 */

let mock: ServedMock;
let renamed: MinimalServer;
let skewed: MinimalServer;
/** Names none of which is taxprep's default: doctor has to find every one. */
const OTHER_NAMES = {
  'projects.type': 'projectType',
  'projects.status': 'project_status',
  'deliverables.account_id': 'accountId',
  'deliverables.project_type': 'type',
  'deliverables.offset': 'skip',
};

beforeAll(async () => {
  [mock, renamed, skewed] = await Promise.all([startServeMock(), startContractMinimalServer({ names: OTHER_NAMES }), startContractMinimalServer({ dateOffsetMs: 5 * 60_000 })]);
  for (const key of [...Object.values(mock.keys), MINIMAL_KEY]) registerSecret(key);
});
afterAll(async () => {
  await Promise.all([mock?.stop(), renamed?.close(), skewed?.close()]);
});

const env = { TAXPREP_API_KEY: '', NO_COLOR: '1' };

/** A fresh HOME with one profile, added (and so checked) as a user adds it. */
async function homeWithProfile(baseUrl: string, key: string): Promise<string> {
  const home = makeHome();
  const added = await runCli(['profiles', 'add', '--insecure-storage', 'work', '--base-url', baseUrl], { home, env, input: `${key}\n` });
  expect(added.exitCode).toBe(0);
  return home;
}

interface DoctorReport {
  passed: boolean;
  exit_code: number;
  request_budget: number;
  requests_used: number;
  checks: Array<{ group: string; name: string; status: string; detail: string; fix: string | null }>;
  query_parameters: Record<string, { configured: string; found: string | null; outcome: string }>;
  saved: boolean;
}

const check = (report: DoctorReport, name: string) => report.checks.find((entry) => entry.name === name)!;

describe('taxprep doctor', () => {
  it('against the mock: every check passes, within the budget said up front, exit 0', async () => {
    const home = await homeWithProfile(mock.baseUrl, DEMO_API_KEYS.acme);
    const result = await runCli(['doctor', '--json'], { home, env });
    expect(result.exitCode).toBe(0);
    expect(result.stderr).toBe(`Checking profile "work" against ${mock.baseUrl}: at most 15 requests, reads only (nothing is written).\n`);
    const report = JSON.parse(result.stdout) as DoctorReport;
    expect(report.checks.filter((entry) => entry.status !== 'ok')).toEqual([]);
    expect(report.checks.map((entry) => entry.group)).toEqual(expect.arrayContaining(['base_url', 'key', 'clock', 'quota', 'names', 'local']));
    expect(report).toMatchObject({ passed: true, exit_code: 0, request_budget: 15, saved: false });
    expect(report.requests_used).toBeLessThanOrEqual(15);
    expect(Object.values(report.query_parameters).map((entry) => entry.outcome)).toEqual(['honoured', 'honoured', 'honoured', 'honoured', 'honoured']);
    expect(check(report, 'read permissions').detail).toMatch(/^accounts, documents, projects, deliverables \(one read each/);

    const text = await runCli(['doctor'], { home, env });
    expect(text.exitCode).toBe(0);
    expect(text.stdout).toMatch(/^Open names\n {2}ok {4}projects\.type +"type" is honoured/m);
    expect(text.stdout).toMatch(/^All checks passed: \d+ ok, 0 warnings, 0 skipped; \d+ of 15 requests\.$/m);

    // On a terminal 80 columns wide, a long detail wraps at a word and goes on under itself.
    const narrow = await runCli(['doctor'], { home, env: { ...env, TAXPREP_FORCE_TTY: '80' } });
    expect(narrow.exitCode).toBe(0);
    // Only a word longer than the room beside the names (a long path) may stick out: words are never cut.
    for (const line of narrow.stdout.split('\n')) {
      if (Math.max(...line.trim().split(/\s+/).map((word) => word.length)) < 40) expect(line.length, line).toBeLessThanOrEqual(80);
    }
    expect(narrow.stdout).toMatch(/^ {2}ok {4}read permissions +accounts, documents, projects, deliverables\n {35}\(one read each/m);
  });

  it('an expired key fails with exit 3, saying to ask for a new one', async () => {
    const home = await homeWithProfile(mock.baseUrl, DEMO_API_KEYS.acme);
    const expired = await runCli(['doctor', '--json'], { home, env: { ...env, TAXPREP_API_KEY: DEMO_API_KEYS.expired } });
    expect(expired.exitCode).toBe(3);
    const report = JSON.parse(expired.stdout) as DoctorReport;
    expect(check(report, 'accepted')).toMatchObject({ status: 'fail', detail: expect.stringMatching(/^expired \(GET \/deliverables\?limit=100: HTTP 401 EXPIRED_API_KEY\)/) });
    expect(check(report, 'accepted').fix).toContain('Ask the service operator for a new key');
  });

  it('against a service with other names: finds all five, --save stores them, and lists come out right', async () => {
    const home = await homeWithProfile(renamed.baseUrl(), MINIMAL_KEY);
    // --all finds the offset's name itself (and remembers it); the filters' names are doctor's to find.
    const before = await runCli(['deliverables', 'list', '--all', '--limit', '1', '--ndjson'], { home, env });
    expect(before.exitCode).toBe(0);
    expect(before.stdout.trim().split('\n')).toHaveLength(2);
    expect(before.stderr).toContain('honours "skip" as the offset of deliverables');

    const found = await runCli(['doctor', '--json'], { home, env });
    expect(found.exitCode).toBe(0);
    const report = JSON.parse(found.stdout) as DoctorReport;
    expect(Object.fromEntries(Object.entries(report.query_parameters).map(([setting, entry]) => [setting, [entry.outcome, entry.found]]))).toEqual(
      Object.fromEntries(Object.entries(OTHER_NAMES).map(([setting, name]) => [setting, [setting === 'deliverables.offset' ? 'honoured' : 'other', name]])),
    );
    expect(check(report, 'projects.type')).toMatchObject({ status: 'warn', fix: 'Store it in profile "work": taxprep doctor --save' });
    expect(report.checks.filter((entry) => entry.group === 'rules' && entry.name === 'deliverables.offset')).toMatchObject([{ status: 'ok', detail: expect.stringMatching(/^"skip" \(learned from the service \(--all found it after a repeated page \(2 requests\)\) on /) }]);
    expect(report.requests_used).toBeLessThanOrEqual(15);

    const saved = await runCli(['doctor', '--save'], { home, env });
    expect(saved.exitCode).toBe(0);
    expect(saved.stdout).toMatch(/^ {2}ok {4}projects\.type +the service honours "projectType", not "type" .*; saved in profile "work"$/m);
    const shown = await runCli(['profiles', 'show', '--json'], { home, env });
    expect(JSON.parse(shown.stdout).query_parameters).toEqual(OTHER_NAMES);
    expect((await runCli(['profiles', 'show'], { home, env })).stdout).toMatch(/^Query names: +projects\.type=projectType, .*deliverables\.offset=skip$/m);

    const all = await runCli(['deliverables', 'list', '--all', '--limit', '1', '--ndjson'], { home, env });
    expect(all.stdout.trim().split('\n').map((line) => JSON.parse(line).id)).toEqual(['901', '902']);
    expect(all.stderr).toBe('');
    const filtered = await runCli(['deliverables', 'list', '--account', '2002', '--type', 'tax_planning', '--json'], { home, env });
    expect(JSON.parse(filtered.stdout).deliverables.map((item: { id: string }) => item.id)).toEqual(['902']);
    expect(filtered.stderr).toBe('');
    const projects = await runCli(['projects', 'list', '2001', '--type', 'tax_planning', '--status', 'completed', '--json'], { home, env });
    expect(JSON.parse(projects.stdout).projects.map((item: { id: string }) => item.id)).toEqual(['502']);
    expect(projects.stderr).toBe('');
    const documents = await runCli(['docs', 'list', '2001', '--tax-year', '2024', '--json'], { home, env });
    expect(documents.exitCode).toBe(0);

    const again = JSON.parse((await runCli(['doctor', '--json'], { home, env })).stdout) as DoctorReport;
    expect(Object.values(again.query_parameters).every((entry) => entry.outcome === 'honoured')).toBe(true);
  });

  it('against a service whose clock is 5 minutes ahead: a warning with a fix, exit 0', async () => {
    const home = await homeWithProfile(skewed.baseUrl(), MINIMAL_KEY);
    const result = await runCli(['doctor', '--json'], { home, env });
    expect(result.exitCode).toBe(0);
    const skew = check(JSON.parse(result.stdout) as DoctorReport, 'skew');
    expect(skew.status).toBe('warn');
    expect(skew.detail).toMatch(/^this machine's clock is (4m 5\ds|5m( \ds)?) behind the service \(more than 30s\)/);
    expect(skew.fix).toContain('network time');
  });

  it('nothing listening: the base URL fails with exit 7 and a fix, the rest is skipped', async () => {
    const port = await closedPort();
    const result = await runCli(['doctor', '--json'], { env: { ...env, TAXPREP_BASE_URL: `http://127.0.0.1:${port}/v1beta`, TAXPREP_API_KEY: DEMO_API_KEYS.acme } });
    expect(result.exitCode).toBe(7);
    const report = JSON.parse(result.stdout) as DoctorReport;
    expect(check(report, 'reachable')).toMatchObject({ status: 'fail', detail: `nothing is listening at http://127.0.0.1:${port}: is the service (or \`taxprep serve --mock\`) running?` });
    expect(check(report, 'accepted').status).toBe('skip');
    expect(report.requests_used).toBe(1);
  });

  it('--offline: only local checks; a profile file others can read fails with exit 2 and says how to fix it', async () => {
    const home = await homeWithProfile(mock.baseUrl, DEMO_API_KEYS.acme);
    const path = join(home, '.config', 'taxprep', 'profiles.json');
    chmodSync(path, 0o644);
    const result = await runCli(['doctor', '--offline', '--json'], { home, env });
    expect(result.exitCode).toBe(2);
    const report = JSON.parse(result.stdout) as DoctorReport;
    expect(report.requests_used).toBe(0);
    expect(report.checks.map((entry) => entry.group)).not.toContain('names');
    expect(check(report, 'profile file')).toMatchObject({ status: 'fail', fix: `chmod 600 '${path}'` });
    expect((await runCli(['doctor', '--offline', '--save'], { home, env })).exitCode).toBe(2);
  });
});

describe('profiles add checks the key before storing it', () => {
  it('a mistyped key is refused with exit 3 and the old key kept; a new key shows old and new redacted forms', async () => {
    const home = await homeWithProfile(mock.baseUrl, DEMO_API_KEYS.acme);
    const mistyped = 'tpk_mockAcmeLiveKey0000000000009';
    registerSecret(mistyped);
    const refused = await runCli(['profiles', 'add', '--insecure-storage', 'work'], { home, env, input: `${mistyped}\n` });
    expect(refused.exitCode).toBe(3);
    expect(refused.stderr).toContain('error: the service refused the key tpk_…0009 (GET /deliverables?limit=1: HTTP 401 INVALID_API_KEY); profile "work" keeps its key tpk_…0001');
    expect(JSON.parse(readFileSync(join(home, '.config', 'taxprep', 'profiles.json'), 'utf8')).profiles.work.api_key).toBe(DEMO_API_KEYS.acme);

    const replaced = await runCli(['profiles', 'add', '--insecure-storage', 'work'], { home, env, input: `${DEMO_API_KEYS.readOnly}\n` });
    expect(replaced.exitCode).toBe(0);
    expect(replaced.stderr).toContain('Replaced profile "work": ' + mock.baseUrl + ', key tpk_…0004 (was tpk_…0001) (the default profile), accepted by the service.');
  });

  it('a service that cannot be reached stores nothing (exit 7) unless --no-verify', async () => {
    const port = await closedPort();
    const home = makeHome();
    const baseUrl = `http://127.0.0.1:${port}/v1beta`;
    const unreachable = await runCli(['profiles', 'add', '--insecure-storage', 'work', '--base-url', baseUrl], { home, env, input: `${DEMO_API_KEYS.acme}\n` });
    expect(unreachable.exitCode).toBe(7);
    expect(unreachable.stderr).toContain('To store the key without checking it, add --no-verify.');
    expect((await runCli(['profiles', 'list'], { home, env })).stdout).toBe('');
    const offline = await runCli(['profiles', 'add', '--insecure-storage', 'work', '--base-url', baseUrl, '--no-verify'], { home, env, input: `${DEMO_API_KEYS.acme}\n` });
    expect(offline.exitCode).toBe(0);
    expect(offline.stderr).toContain('not checked (--no-verify)');
  });
});

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
