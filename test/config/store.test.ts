import { mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Conf from 'conf';
import { describe, expect, it } from 'vitest';
import { openProfileStore } from '../../src/config/store';
import { UsageError } from '../../src/errors';

const KEY = 'tpk_storeTestKey00000000000000001';
const posix = process.platform !== 'win32';

function freshEnv() {
  return { XDG_CONFIG_HOME: mkdtempSync(join(tmpdir(), 'taxprep-store-')) };
}

describe('profile store', () => {
  it('saves profiles; the first becomes the default; use and remove change it', async () => {
    const store = openProfileStore(freshEnv());
    expect(store.list()).toEqual([]);
    await store.save({ name: 'staging', baseUrl: 'https://staging.example/v1beta', apiKey: KEY });
    await store.save({ name: 'acme', baseUrl: 'https://acme.example/v1beta', apiKey: KEY });
    expect(store.defaultName()).toBe('staging');
    expect(store.list().map((profile) => profile.name)).toEqual(['acme', 'staging']);
    await store.setDefault('acme');
    expect(store.defaultName()).toBe('acme');
    expect(await store.remove('acme')).toBe(true);
    expect(store.defaultName()).toBeUndefined();
    expect(await store.remove('acme')).toBe(false);
    expect(store.get('staging')).toEqual({ name: 'staging', baseUrl: 'https://staging.example/v1beta', apiKey: KEY });
  });

  it('keeps max_response_size and query_parameters, in snake_case on disk', async () => {
    const store = openProfileStore(freshEnv());
    await store.save({ name: 'real', baseUrl: 'https://api.example/v1beta', apiKey: KEY, maxResponseSize: '16MB', queryParameters: { 'projects.type': 'project_type' } });
    expect(store.get('real')).toEqual({ name: 'real', baseUrl: 'https://api.example/v1beta', apiKey: KEY, maxResponseSize: '16MB', queryParameters: { 'projects.type': 'project_type' } });
    expect(JSON.parse(readFileSync(store.path, 'utf8')).profiles.real).toEqual({ base_url: 'https://api.example/v1beta', api_key: KEY, max_response_size: '16MB', query_parameters: { 'projects.type': 'project_type' } });
  });

  it.runIf(posix)('keeps the file at mode 0600 and its directory at 0700', async () => {
    const env = freshEnv();
    const store = openProfileStore(env);
    await store.save({ name: 'acme', baseUrl: 'https://acme.example/v1beta', apiKey: KEY });
    expect(store.path).toBe(join(env.XDG_CONFIG_HOME, 'taxprep', 'profiles.json'));
    expect(statSync(store.path).mode & 0o777).toBe(0o600);
    expect(statSync(join(env.XDG_CONFIG_HOME, 'taxprep')).mode & 0o777).toBe(0o700);
  });

  it.runIf(posix)('tightens a directory and file that were too open', async () => {
    const env = freshEnv();
    const directory = join(env.XDG_CONFIG_HOME, 'taxprep');
    mkdirSync(directory, { mode: 0o755 });
    writeFileSync(join(directory, 'profiles.json'), '{"profiles":{}}', { mode: 0o644 });
    const store = openProfileStore(env);
    await store.save({ name: 'acme', baseUrl: 'https://acme.example/v1beta', apiKey: KEY });
    expect(statSync(directory).mode & 0o777).toBe(0o700);
    expect(statSync(store.path).mode & 0o777).toBe(0o600);
  });

  it('reading creates no file and no directory', () => {
    const env = freshEnv();
    const store = openProfileStore(env);
    expect(store.list()).toEqual([]);
    expect(store.defaultName()).toBeUndefined();
    expect(() => statSync(join(env.XDG_CONFIG_HOME, 'taxprep'))).toThrow(/ENOENT/);
  });

  it('knows no profile it did not store, whatever its name', async () => {
    const store = openProfileStore(freshEnv());
    await store.save({ name: 'acme', baseUrl: 'https://acme.example/v1beta', apiKey: KEY });
    expect(store.get('constructor')).toBeUndefined();
    expect(await store.remove('toString')).toBe(false);
    await expect(store.setDefault('hasOwnProperty')).rejects.toThrow('profile "hasOwnProperty" does not exist (profiles: acme)');
    expect(store.list().map((profile) => profile.name)).toEqual(['acme']);
  });

  it('refuses a bad profile name', async () => {
    const store = openProfileStore(freshEnv());
    await expect(store.save({ name: 'bad name', baseUrl: 'https://a.example', apiKey: KEY })).rejects.toThrow(UsageError);
  });

  it('reads a file that conf wrote, and writes one conf reads, in conf\'s format', async () => {
    const env = freshEnv();
    const cwd = join(env.XDG_CONFIG_HOME, 'taxprep');
    const conf = new Conf<Record<string, unknown>>({ projectName: 'taxprep', cwd, configName: 'profiles', accessPropertiesByDotNotation: false });
    conf.store = { profiles: { acme: { base_url: 'https://acme.example/v1beta', api_key: KEY } }, default_profile: 'acme' };
    const store = openProfileStore(env);
    expect(store.get('acme')).toEqual({ name: 'acme', baseUrl: 'https://acme.example/v1beta', apiKey: KEY });
    expect(store.defaultName()).toBe('acme');

    await store.save({ name: 'beta', baseUrl: 'https://beta.example/v1beta', apiKey: KEY });
    expect(conf.store).toEqual({
      profiles: { acme: { base_url: 'https://acme.example/v1beta', api_key: KEY }, beta: { base_url: 'https://beta.example/v1beta', api_key: KEY } },
      default_profile: 'acme',
    });
    expect(readFileSync(store.path, 'utf8')).toBe(JSON.stringify(conf.store, undefined, '\t'));
  });

  it('keeps keys it does not know through every write', async () => {
    const env = freshEnv();
    const directory = join(env.XDG_CONFIG_HOME, 'taxprep');
    mkdirSync(directory, { recursive: true });
    const extra = { editor: { theme: 'dark' }, note: 'kept' };
    writeFileSync(
      join(directory, 'profiles.json'),
      JSON.stringify({ ...extra, profiles: { acme: { base_url: 'https://acme.example/v1beta', api_key: KEY, region: 'eu' } } }),
    );
    const store = openProfileStore(env);
    await store.save({ name: 'beta', baseUrl: 'https://beta.example/v1beta', apiKey: KEY });
    await store.save({ name: 'acme', baseUrl: 'https://acme2.example/v1beta', apiKey: KEY });
    await store.setDefault('acme');
    await store.remove('beta');
    expect(JSON.parse(readFileSync(store.path, 'utf8'))).toEqual({
      ...extra,
      profiles: { acme: { base_url: 'https://acme2.example/v1beta', api_key: KEY, region: 'eu' } },
      default_profile: 'acme',
    });
  });

  it('a damaged or hand-broken file is a usage error naming the file', () => {
    for (const content of ['{not json', '[]', '{"profiles":{"a":{"base_url":1}}}', '{"profiles":[]}', '{"default_profile":7}']) {
      const env = freshEnv();
      const directory = join(env.XDG_CONFIG_HOME, 'taxprep');
      mkdirSync(directory, { recursive: true });
      writeFileSync(join(directory, 'profiles.json'), content);
      let error: unknown;
      try {
        openProfileStore(env).list();
      } catch (caught) {
        error = caught;
      }
      expect(error).toBeInstanceOf(UsageError);
      expect((error as UsageError).message).toContain(join(directory, 'profiles.json'));
    }
  });
});
