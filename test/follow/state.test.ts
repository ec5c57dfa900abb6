import { mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { UsageError } from '../../src/errors';
import { defaultStatePath, freshState, readState, stagePass, type WatchState } from '../../src/follow/state';

const writeState = async (path: string, state: WatchState) => (await stagePass(path, { state, changes: [] })).commit();

const BASE = 'http://127.0.0.1:4010/v1beta';
const directory = () => mkdtempSync(join(tmpdir(), 'taxprep-watch-state-'));

describe('watch state file', () => {
  it('lives in the XDG state directory, one file per profile and base URL', () => {
    const env = { XDG_STATE_HOME: '/x/state', HOME: '/home/me' };
    const path = defaultStatePath(env, 'work', BASE);
    expect(path).toMatch(/^\/x\/state\/taxprep\/watch\/work-[0-9a-f]{12}\.json$/);
    expect(defaultStatePath(env, 'work', 'https://other/v1beta')).not.toBe(path);
    expect(defaultStatePath(env, 'cron', BASE)).not.toBe(path);
    expect(defaultStatePath({ HOME: '/home/me' }, null, BASE)).toMatch(/^\/home\/me\/\.local\/state\/taxprep\/watch\/no-profile-/);
  });

  it('is written whole, 0600 in a 0700 directory, and read back', async () => {
    const path = join(directory(), 'watch', 'state.json');
    const state = freshState(BASE, 'work', new Date('2026-11-25T00:00:00Z'));
    state.snapshot.accounts['1001'] = { listed_at: '2026-11-25T00:00:00Z' };
    await writeState(path, state);
    expect(await readState(path, { baseUrl: BASE }, { reset: false })).toEqual(state);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(statSync(join(path, '..')).mode & 0o777).toBe(0o700);
    expect(readdirSync(join(path, '..'))).toEqual(['state.json']);
  });

  it('is absent on a first run', async () => {
    expect(await readState(join(directory(), 'none.json'), { baseUrl: BASE }, { reset: false })).toBeUndefined();
  });

  it.each([
    ['not JSON', '{"format":', /damaged: not valid JSON/],
    ['another file', '{"hello":1}', /damaged: format: /],
    ['a wrong field', JSON.stringify({ ...freshState(BASE, null, new Date()), format: 'taxprep-watch-state', version: 1, sent: 'x' }), /damaged: sent: /],
  ])('refuses a damaged file (%s) with a usage error naming it, and leaves it as it was', async (_, content, message) => {
    const path = join(directory(), 'state.json');
    writeFileSync(path, content);
    const error = await readState(path, { baseUrl: BASE }, { reset: false }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(UsageError);
    expect((error as UsageError).message).toContain(path);
    expect((error as UsageError).message).toMatch(message);
    expect((error as UsageError).hint).toContain('--reset-state');
    expect(readFileSync(path, 'utf8')).toBe(content);
    expect(await readState(path, { baseUrl: BASE }, { reset: true })).toBeUndefined();
  });

  it('refuses the state of another base URL', async () => {
    const path = join(directory(), 'state.json');
    await writeState(path, freshState('http://elsewhere/v1beta', null, new Date()));
    await expect(readState(path, { baseUrl: BASE }, { reset: false })).rejects.toThrow(/is for http:\/\/elsewhere\/v1beta, not/);
  });
});

describe('watch state file, exactly', () => {
  it('names the file after the profile, with what a file name cannot hold replaced', () => {
    const path = defaultStatePath({ XDG_STATE_HOME: '/x/state' }, 'acme/prod east', BASE);
    expect(path).toMatch(/^\/x\/state\/taxprep\/watch\/acme_prod_east-[0-9a-f]{12}\.json$/);
  });

  it('starts empty: no look, no request sent, no account unknown', () => {
    expect(freshState(BASE, 'work', new Date('2026-11-25T00:00:00Z'))).toStrictEqual({
      base_url: BASE,
      profile: 'work',
      saved_at: '2026-11-25T00:00:00.000Z',
      snapshot: { deliverables: {}, projects: {}, accounts: {} },
      sent: [],
      unknown_accounts: {},
    });
  });

  /** A state file as a run of this version writes it, every field set. */
  const written = {
    format: 'taxprep-watch-state',
    version: 1,
    base_url: BASE,
    profile: 'work',
    saved_at: '2026-11-25T00:01:00.000Z',
    snapshot: {
      deliverables_read_at: '2026-11-25T00:00:00.000Z',
      deliverable_pages_read_at: ['2026-11-25T00:01:00.000Z'],
      deliverables: { 9001: { project_id: 5002, account_id: 1001, status: 'draft', title: 'Q3', expires_at: null } },
      projects: {
        5001: {
          account_id: 1001,
          status: 'waiting_on_client',
          progress_percentage: 20,
          estimated_completion: null,
          items: { '["missing_document","W-2",null]': { type: 'missing_document', description: 'W-2', priority: 'high', requested_at: null } },
          checked_at: '2026-11-25T00:01:00.000Z',
        },
      },
      accounts: { 1001: { listed_at: '2026-11-25T00:00:00.000Z' } },
    },
    sent: ['2026-11-25T00:00:30.000Z'],
    unknown_accounts: { 999999: 'ACCOUNT_NOT_FOUND' },
    outbox_pass: 'pass_1',
  };

  it('reads a file an earlier run wrote, every field kept, and writes the same document back', async () => {
    const path = join(directory(), 'state.json');
    writeFileSync(path, `${JSON.stringify(written)}\n`);
    const { format: _format, version: _version, ...state } = written;
    const read = await readState(path, { baseUrl: BASE }, { reset: false });
    expect(read).toStrictEqual(state);
    const again = join(directory(), 'state.json');
    await writeState(again, read!);
    expect(JSON.parse(readFileSync(again, 'utf8'))).toStrictEqual(written);
  });

  it.each([
    ['a project id that is not a number', { ...written, snapshot: { ...written.snapshot, projects: { 'x5001': written.snapshot.projects[5001] } } }],
    ['a project id with more after the number', { ...written, snapshot: { ...written.snapshot, projects: { '5001x': written.snapshot.projects[5001] } } }],
    ['another format', { ...written, format: 'taxprep-hooks' }],
  ])('refuses %s', async (_, document) => {
    const path = join(directory(), 'state.json');
    writeFileSync(path, JSON.stringify(document));
    await expect(readState(path, { baseUrl: BASE }, { reset: false })).rejects.toThrow(/is damaged: /);
  });

  it('says in --json which rule a damaged file broke, and which file', async () => {
    const path = join(directory(), 'state.json');
    writeFileSync(path, '{"format":');
    const error = (await readState(path, { baseUrl: BASE }, { reset: false }).catch((caught: unknown) => caught)) as UsageError;
    expect(error.toBody()).toEqual({ error: { code: 'USAGE_ERROR', message: `the watch state file ${path} is damaged: not valid JSON; it was left as it is`, details: { state: ['not valid JSON'], path } } });
  });

  it('refuses the state of another base URL naming the way out, and says so in --json', async () => {
    const path = join(directory(), 'state.json');
    await writeState(path, freshState('http://elsewhere/v1beta', null, new Date()));
    const error = (await readState(path, { baseUrl: BASE }, { reset: false }).catch((caught: unknown) => caught)) as UsageError;
    expect(error).toBeInstanceOf(UsageError);
    expect(error.toBody()).toEqual({
      error: { code: 'USAGE_ERROR', message: `the watch state file ${path} is for http://elsewhere/v1beta, not ${BASE}; it was left as it is`, details: { state: ['is for another base URL'], path } },
    });
    expect(error.hint).toBe('Give each service its own --state FILE, or --reset-state to start a new baseline in this one.');
  });

  it('refuses a state file it cannot read (not a missing one: that is a first run), and never takes it for a first run', async () => {
    // A directory where the file should be: EISDIR, not ENOENT.
    const path = directory();
    const error = (await readState(path, { baseUrl: BASE }, { reset: false }).catch((caught: unknown) => caught)) as UsageError;
    expect(error).toBeInstanceOf(UsageError);
    expect(error.exitCode).toBe(2);
    expect(error.message).toMatch(new RegExp(`^cannot read the watch state file ${path}: EISDIR`));
    expect(error.details).toEqual({ state: ['cannot be read'], path });
  });

  it('flushes the new state to the disk before it is put in place, and the directory after', async () => {
    const path = join(directory(), 'watch', 'state.json');
    const probe = await open(join(directory(), 'probe'), 'w');
    const sync = vi.spyOn(Object.getPrototypeOf(probe) as { sync: () => Promise<void> }, 'sync');
    await probe.close();
    try {
      const staged = await stagePass(path, { state: freshState(BASE, null, new Date()), changes: [] });
      // The file's own flush happened before anything is printed: a power cut after the print leaves the old state or this one whole.
      expect(sync).toHaveBeenCalledTimes(1);
      await staged.commit();
      expect(sync).toHaveBeenCalledTimes(2);
    } finally {
      sync.mockRestore();
    }
  });
});
