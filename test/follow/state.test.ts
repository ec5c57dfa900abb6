import { mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
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
