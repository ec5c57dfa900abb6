import { mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { configDirectory, openProfileStore } from '../../src/config/store';
import { UsageError } from '../../src/errors';

const KEY = 'tpk_storeTestKey00000000000000001';
const posix = process.platform !== 'win32';

function freshEnv() {
  return { XDG_CONFIG_HOME: mkdtempSync(join(tmpdir(), 'taxprep-store-')) };
}

describe('profile store', () => {
  it('saves profiles; the first becomes the default; use and remove change it', () => {
    const store = openProfileStore(freshEnv());
    expect(store.list()).toEqual([]);
    store.save({ name: 'staging', baseUrl: 'https://staging.example/v1beta', apiKey: KEY });
    store.save({ name: 'acme', baseUrl: 'https://acme.example/v1beta', apiKey: KEY });
    expect(store.defaultName()).toBe('staging');
    expect(store.list().map((profile) => profile.name)).toEqual(['acme', 'staging']);
    store.setDefault('acme');
    expect(store.defaultName()).toBe('acme');
    expect(store.remove('acme')).toBe(true);
    expect(store.defaultName()).toBeUndefined();
    expect(store.remove('acme')).toBe(false);
    expect(store.get('staging')).toEqual({ name: 'staging', baseUrl: 'https://staging.example/v1beta', apiKey: KEY });
  });

  it('keeps max_response_size and query_parameters, in snake_case on disk', () => {
    const store = openProfileStore(freshEnv());
    store.save({ name: 'real', baseUrl: 'https://api.example/v1beta', apiKey: KEY, maxResponseSize: '16MB', queryParameters: { 'projects.type': 'project_type' } });
    expect(store.get('real')).toEqual({ name: 'real', baseUrl: 'https://api.example/v1beta', apiKey: KEY, maxResponseSize: '16MB', queryParameters: { 'projects.type': 'project_type' } });
    expect(JSON.parse(readFileSync(store.path, 'utf8')).profiles.real).toEqual({ base_url: 'https://api.example/v1beta', api_key: KEY, max_response_size: '16MB', query_parameters: { 'projects.type': 'project_type' } });
  });

  it.runIf(posix)('keeps the file at mode 0600 and its directory at 0700', () => {
    const env = freshEnv();
    const store = openProfileStore(env);
    store.save({ name: 'acme', baseUrl: 'https://acme.example/v1beta', apiKey: KEY });
    expect(store.path).toBe(join(env.XDG_CONFIG_HOME, 'taxprep', 'profiles.json'));
    expect(statSync(store.path).mode & 0o777).toBe(0o600);
    expect(statSync(join(env.XDG_CONFIG_HOME, 'taxprep')).mode & 0o777).toBe(0o700);
  });

  it.runIf(posix)('tightens a directory and file that were too open', () => {
    const env = freshEnv();
    const directory = join(env.XDG_CONFIG_HOME, 'taxprep');
    mkdirSync(directory, { mode: 0o755 });
    writeFileSync(join(directory, 'profiles.json'), '{"profiles":{}}', { mode: 0o644 });
    const store = openProfileStore(env);
    store.save({ name: 'acme', baseUrl: 'https://acme.example/v1beta', apiKey: KEY });
    expect(statSync(directory).mode & 0o777).toBe(0o700);
    expect(statSync(store.path).mode & 0o777).toBe(0o600);
  });

  it('reading creates no file', () => {
    const env = freshEnv();
    const store = openProfileStore(env);
    store.list();
    expect(() => readFileSync(store.path)).toThrow(/ENOENT/);
  });

  it('refuses a bad profile name', () => {
    const store = openProfileStore(freshEnv());
    expect(() => store.save({ name: 'bad name', baseUrl: 'https://a.example', apiKey: KEY })).toThrow(UsageError);
  });

  it('a damaged or hand-broken file is a usage error naming the file', () => {
    for (const content of ['{not json', '{"profiles":{"a":{"base_url":1}}}']) {
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

  it('lives under XDG_CONFIG_HOME when set, else the platform place', () => {
    expect(configDirectory({ XDG_CONFIG_HOME: '/x' }, 'linux', '/home/u')).toBe('/x/taxprep');
    expect(configDirectory({}, 'linux', '/home/u')).toBe('/home/u/.config/taxprep');
    expect(configDirectory({}, 'darwin', '/Users/u')).toBe('/Users/u/Library/Preferences/taxprep');
  });
});
