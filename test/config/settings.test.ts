import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SELF_SIGNED_CERT } from '../helpers/selfSigned';
import { baseUrlVersionWarning, checkApiKey, checkBaseUrl, checkQueryParameters, DEFAULT_BASE_URL, DEFAULT_MAX_RESPONSE_BYTES, parseSize, resolveSettings } from '../../src/config/settings';
import { hasApiKeyShape, keyRedactor, redactApiKey } from '../../src/contract/apiKeys';
import type { Profile, ProfileStore } from '../../src/types';
import { EXIT, MalformedApiKeyError, MissingCredentialsError, UsageError } from '../../src/errors';

const KEY_A = 'tpk_profileAkey0000000000000001';
const KEY_B = 'tpk_profileBkey0000000000000002';
const KEY_ENV = 'tpk_environmentKey000000000003';

/** An in-memory store that counts how often it was opened. */
function memoryStore(profiles: Profile[], defaultName?: string) {
  const opened = { count: 0 };
  const store: ProfileStore = {
    path: '/memory/profiles.json',
    list: () => profiles,
    get: (name) => profiles.find((profile) => profile.name === name),
    defaultName: () => defaultName,
    save: async () => undefined,
    remove: async () => false,
    setDefault: async () => undefined,
  };
  return {
    opened,
    profiles: async () => {
      opened.count += 1;
      return store;
    },
  };
}

const stored = [
  { name: 'a', baseUrl: 'https://a.example/v1beta', apiKey: KEY_A },
  { name: 'b', baseUrl: 'https://b.example/v1beta', apiKey: KEY_B },
];

describe('settings precedence: flags, environment, profile, defaults', () => {
  const cases: Array<{
    name: string;
    flags?: { profile?: string; baseUrl?: string };
    env?: Record<string, string>;
    defaultName?: string;
    expected: { profileName: string | null; baseUrl: string; baseUrlSource: string; apiKey?: string; apiKeySource?: string };
  }> = [
    { name: 'nothing anywhere: the default base URL, no key', expected: { profileName: null, baseUrl: DEFAULT_BASE_URL, baseUrlSource: 'default' } },
    { name: 'the default profile', defaultName: 'a', expected: { profileName: 'a', baseUrl: 'https://a.example/v1beta', baseUrlSource: 'profile', apiKey: KEY_A, apiKeySource: 'profile' } },
    { name: 'TAXPREP_PROFILE picks another profile', defaultName: 'a', env: { TAXPREP_PROFILE: 'b' }, expected: { profileName: 'b', baseUrl: 'https://b.example/v1beta', baseUrlSource: 'profile', apiKey: KEY_B, apiKeySource: 'profile' } },
    { name: '--profile beats TAXPREP_PROFILE', defaultName: 'a', flags: { profile: 'a' }, env: { TAXPREP_PROFILE: 'b' }, expected: { profileName: 'a', baseUrl: 'https://a.example/v1beta', baseUrlSource: 'profile', apiKey: KEY_A, apiKeySource: 'profile' } },
    { name: 'environment key and URL beat the default profile', defaultName: 'a', env: { TAXPREP_API_KEY: KEY_ENV, TAXPREP_BASE_URL: 'https://env.example/v1beta' }, expected: { profileName: null, baseUrl: 'https://env.example/v1beta', baseUrlSource: 'environment', apiKey: KEY_ENV, apiKeySource: 'environment' } },
    { name: 'environment key with the default profile URL', defaultName: 'a', env: { TAXPREP_API_KEY: KEY_ENV }, expected: { profileName: 'a', baseUrl: 'https://a.example/v1beta', baseUrlSource: 'profile', apiKey: KEY_ENV, apiKeySource: 'environment' } },
    { name: 'environment beats a profile chosen by TAXPREP_PROFILE', env: { TAXPREP_PROFILE: 'b', TAXPREP_API_KEY: KEY_ENV }, expected: { profileName: 'b', baseUrl: 'https://b.example/v1beta', baseUrlSource: 'profile', apiKey: KEY_ENV, apiKeySource: 'environment' } },
    { name: 'a profile chosen by --profile beats the environment', flags: { profile: 'b' }, env: { TAXPREP_API_KEY: KEY_ENV, TAXPREP_BASE_URL: 'https://env.example/v1beta' }, expected: { profileName: 'b', baseUrl: 'https://b.example/v1beta', baseUrlSource: 'profile', apiKey: KEY_B, apiKeySource: 'profile' } },
    { name: '--base-url beats everything', defaultName: 'a', flags: { profile: 'b', baseUrl: 'http://flag.example:8080/v1beta/' }, env: { TAXPREP_BASE_URL: 'https://env.example/v1beta' }, expected: { profileName: 'b', baseUrl: 'http://flag.example:8080/v1beta', baseUrlSource: 'flag', apiKey: KEY_B, apiKeySource: 'profile' } },
    { name: 'empty variables count as unset', defaultName: 'a', env: { TAXPREP_API_KEY: '', TAXPREP_BASE_URL: '', TAXPREP_PROFILE: '' }, expected: { profileName: 'a', baseUrl: 'https://a.example/v1beta', baseUrlSource: 'profile', apiKey: KEY_A, apiKeySource: 'profile' } },
  ];

  it.each(cases)('$name', async ({ flags = {}, env = {}, defaultName, expected }) => {
    const { profiles } = memoryStore(stored, defaultName);
    const settings = await resolveSettings({ globals: flags, env, profiles });
    expect(settings).toMatchObject({ ...expected, apiKey: expected.apiKey, apiKeySource: expected.apiKeySource });
  });

  it('does not open the profile store when flags and environment give everything', async () => {
    const { profiles, opened } = memoryStore(stored, 'a');
    await resolveSettings({ globals: {}, env: { TAXPREP_API_KEY: KEY_ENV, TAXPREP_BASE_URL: 'https://env.example/v1beta' }, profiles });
    expect(opened.count).toBe(0);
    await resolveSettings({ globals: { baseUrl: 'https://flag.example/v1beta' }, env: { TAXPREP_API_KEY: KEY_ENV }, profiles });
    expect(opened.count).toBe(0);
  });

  it('an unknown profile is a usage error listing the known ones', async () => {
    const { profiles } = memoryStore(stored, 'a');
    const error = await resolveSettings({ globals: { profile: 'nope' }, env: {}, profiles }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(UsageError);
    expect((error as UsageError).message).toBe('profile "nope" does not exist (profiles: a, b)');
    expect((error as UsageError).hint).toBe('Add it with: taxprep profiles add nope');
  });
});

describe('base URL rule', () => {
  it.each([
    ['https://api.example.com/v1beta/', 'https://api.example.com/v1beta'],
    ['http://127.0.0.1:4010/v1beta', 'http://127.0.0.1:4010/v1beta'],
  ])('accepts %s', (input, expected) => {
    expect(checkBaseUrl(input, '--base-url')).toBe(expected);
  });

  it.each(['ftp://api.example.com', 'https://user:pass@api.example.com', 'https://api.example.com/v1beta?x=1', 'not a url', 'api.example.com'])(
    'refuses %s naming where it came from',
    (input) => {
      expect(() => checkBaseUrl(input, 'TAXPREP_BASE_URL')).toThrow(/TAXPREP_BASE_URL.*must be an http:\/\/ or https:\/\/ URL/);
    },
  );
});

describe('key check before any request', () => {
  const base = { profileName: null, baseUrl: DEFAULT_BASE_URL, baseUrlSource: 'default' as const, maxResponseBytes: DEFAULT_MAX_RESPONSE_BYTES, queryParameters: {} };

  it('no key: MissingCredentialsError, exit 3', () => {
    expect(() => checkApiKey({ ...base, apiKey: undefined, apiKeySource: undefined })).toThrow(MissingCredentialsError);
  });

  it('a malformed key: INVALID_API_KEY with the service hint, exit 3, naming its source but not the key', () => {
    let error: unknown;
    try {
      checkApiKey({ ...base, apiKey: 'sk live abcdef', apiKeySource: 'environment' });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(MalformedApiKeyError);
    const malformed = error as MalformedApiKeyError;
    expect(malformed.exitCode).toBe(EXIT.AUTH);
    expect(malformed.code).toBe('INVALID_API_KEY');
    expect(malformed.message).toBe('the API key from TAXPREP_API_KEY is not well formed');
    expect(malformed.hint).toContain('<prefix>_<random>');
  });
});

describe('the contract\'s key shape, whatever the prefix', () => {
  it.each([
    ['tpk_abcdefghij0123456789', true, 'tpk_…6789'],
    ['live_4f9a8b7c6d5e4f3a2b1c', true, 'live_…2b1c'],
    ['sk_live_abcdefghijklmnop', true, 'sk_…mnop'],
    ['ab_short', true, 'ab_…'],
    ['no-underscore', false, '(malformed key, hidden)'],
    ['has space_abc', false, '(malformed key, hidden)'],
    ['_noprefix', false, '(malformed key, hidden)'],
  ])('%s', (key, shaped, redacted) => {
    expect(hasApiKeyShape(key)).toBe(shaped);
    expect(redactApiKey(key)).toBe(redacted);
  });
});

describe('keyRedactor: the key in a text from the service', () => {
  const redact = keyRedactor('live_a/b+C_9zQx81kd00');
  it.each([
    ['plainly', 'Key Bearer live_a/b+C_9zQx81kd00 is not valid', 'Key Bearer live_…kd00 is not valid'],
    ['plainly, every time', 'live_a/b+C_9zQx81kd00,live_a/b+C_9zQx81kd00', 'live_…kd00,live_…kd00'],
    // A `%` or `\` anywhere sends the text through the pattern of every form; the plain one too.
    ['plainly, beside a % and a \\', '100% of \\ live_a/b+C_9zQx81kd00', '100% of \\ live_…kd00'],
    ['percent-encoded, any case', 'GET /x?key=live_a%2Fb%2bC_9zQx81kd00 refused', 'GET /x?key=live_…kd00 refused'],
    ['as JSON escapes, in a mix', 'Key Bearer \\u006cive_a\\/b\\u002BC_9zQx81kd\\u0030\\u0030 is not valid', 'Key Bearer live_…kd00 is not valid'],
  ])('%s', (_form, text, redacted) => {
    expect(redact(text)).toBe(redacted);
  });

  it('leaves other text, and every text when there is no key', () => {
    expect(redact('live_a/b+C_9zQx81kd01 and LIVE_A/B+C_9ZQX81KD00')).toBe('live_a/b+C_9zQx81kd01 and LIVE_A/B+C_9ZQX81KD00');
    expect(keyRedactor(undefined)('live_a/b+C_9zQx81kd00')).toBe('live_a/b+C_9zQx81kd00');
  });
});

describe('new settings', () => {
  it('sizes: units are powers of 1024, from 1KB to 1GB', () => {
    expect([parseSize('8MB', 'x'), parseSize('512 kb', 'x'), parseSize('2048', 'x'), parseSize('1GiB', 'x')]).toEqual([8 * 1024 ** 2, 512 * 1024, 2048, 1024 ** 3]);
    for (const bad of ['0', '10', '2GB', 'lots', '-1MB']) expect(() => parseSize(bad, '--max-response-size')).toThrow(/--max-response-size must be a size such as 8MB/);
  });

  it('--max-response-size beats TAXPREP_MAX_RESPONSE_SIZE, which beats the profile', async () => {
    const profile = { name: 'a', baseUrl: 'https://a.example/v1beta', apiKey: KEY_A, maxResponseSize: '2MB', queryParameters: { 'projects.type': 'kind' } };
    const profiles = async () => memoryStore([profile], 'a').profiles();
    expect((await resolveSettings({ globals: {}, env: {}, profiles })).maxResponseBytes).toBe(2 * 1024 ** 2);
    expect((await resolveSettings({ globals: {}, env: { TAXPREP_MAX_RESPONSE_SIZE: '3MB' }, profiles })).maxResponseBytes).toBe(3 * 1024 ** 2);
    expect((await resolveSettings({ globals: { maxResponseSize: '4MB' }, env: { TAXPREP_MAX_RESPONSE_SIZE: '3MB' }, profiles })).maxResponseBytes).toBe(4 * 1024 ** 2);
    const names = await resolveSettings({ globals: {}, env: { TAXPREP_QUERY_PARAMETERS: 'projects.status=state' }, profiles });
    expect(names.queryParameters).toMatchObject({ 'projects.type': 'kind', 'projects.status': 'state', 'deliverables.account_id': 'account_id' });
  });

  it('the CA file: --ca-file beats TAXPREP_CA_FILE, which beats the profile; a wrong one is a usage error naming its setting', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'taxprep-ca-'));
    const [flag, env, stored] = ['flag', 'env', 'profile'].map((name) => {
      const path = join(dir, `${name}.pem`);
      writeFileSync(path, SELF_SIGNED_CERT);
      return path;
    });
    const profile = { name: 'a', baseUrl: 'https://a.example/v1beta', apiKey: KEY_A, caFile: stored! };
    const profiles = async () => memoryStore([profile], 'a').profiles();
    const caFile = async (globals: { caFile?: string }, environment: Record<string, string>) => (await resolveSettings({ globals, env: environment, profiles })).caFile;
    expect(await caFile({}, {})).toEqual({ path: stored, where: 'ca_file of profile "a"', certificates: [SELF_SIGNED_CERT.trim()] });
    expect((await caFile({}, { TAXPREP_CA_FILE: env! }))?.where).toBe('TAXPREP_CA_FILE');
    expect((await caFile({ caFile: flag! }, { TAXPREP_CA_FILE: env! }))?.where).toBe('--ca-file');
    const none = async () => memoryStore([{ ...profile, caFile: undefined }], 'a').profiles();
    expect((await resolveSettings({ globals: {}, env: {}, profiles: none })).caFile).toBeUndefined();
    const wrong = resolveSettings({ globals: {}, env: {}, profiles: async () => memoryStore([{ ...profile, caFile: join(dir, 'nope.pem') }], 'a').profiles() });
    await expect(wrong).rejects.toThrow(`the CA file ${join(dir, 'nope.pem')} (ca_file of profile "a") does not exist`);
    await expect(wrong).rejects.toMatchObject({ exitCode: EXIT.USAGE, details: { ca_file: [expect.stringContaining('PEM')] } });
  });

  it('query parameter names: only the filters the contract does not name, with plain names', () => {
    expect(checkQueryParameters([['deliverables.account_id', 'account']], 'x')).toEqual({ 'deliverables.account_id': 'account' });
    expect(checkQueryParameters([['deliverables.offset', 'skip']], 'x')).toEqual({ 'deliverables.offset': 'skip' });
    expect(() => checkQueryParameters([['docs.tax_year', 'year']], 'TAXPREP_QUERY_PARAMETERS')).toThrow(/query parameter names \(TAXPREP_QUERY_PARAMETERS\) must map projects\.type/);
    expect(() => checkQueryParameters([['projects.type', 'a b']], 'x')).toThrow(UsageError);
    expect(() => checkQueryParameters([['__proto__', 'x']], 'x')).toThrow(UsageError);
  });

  it('a base URL without /v1beta gets a warning', () => {
    expect(baseUrlVersionWarning('https://api.example/v1beta')).toBeUndefined();
    expect(baseUrlVersionWarning('https://api.example')).toMatch(/^warning: the base URL https:\/\/api\.example does not end in \/v1beta/);
  });
});
