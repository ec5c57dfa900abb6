import { mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ruleFromRefusal, ruleProblem, uploadRulesOf } from '../../src/api/uploadRules';
import { openLearnedStore } from '../../src/config/learned';
import { resolveSettings } from '../../src/config/settings';
import { normalType } from '../../src/contract/uploads';
import { UsageError } from '../../src/errors';
import { formatBytes } from '../../src/output/progress';
import type { ProfileStore } from '../../src/types';

const refusal = (code: string, message: string, details?: unknown) => ({ error: { code, message, ...(details === undefined ? {} : { details }) } });

describe('the rule an upload refusal names', () => {
  it("reads the limit and the types from the details, in the mock's words and in others'", () => {
    expect(ruleFromRefusal(413, refusal('PAYLOAD_TOO_LARGE', 'too large', { max_bytes: 104857600 }))).toEqual({ maxBytes: 104857600 });
    expect(ruleFromRefusal(413, refusal('FILE_TOO_LARGE', 'File exceeds the maximum size', { max_file_size: 10485760, received: 125829120 }))).toEqual({ maxBytes: 10485760 });
    expect(ruleFromRefusal(413, refusal('TOO_BIG', 'no', { limits: { maxUploadSize: '25MB' } }))).toEqual({ maxBytes: 25 * 1024 * 1024 });
    expect(ruleFromRefusal(415, refusal('UNSUPPORTED_MEDIA_TYPE', 'no', { provided: 'application/zip', expected: ['application/pdf', 'Image/PNG'] }))).toEqual({ types: ['application/pdf', 'image/png'] });
    expect(ruleFromRefusal(400, refusal('INVALID_FILE_TYPE', 'File type not allowed', { allowed_extensions: ['PDF', '.jpg'] }))).toEqual({ types: ['.pdf', '.jpg'] });
    expect(ruleFromRefusal(400, refusal('VALIDATION_ERROR', 'The file is too large', { max_size: 5_000_000 }))).toEqual({ maxBytes: 5_000_000 });
  });

  it('teaches nothing without such details, from a 400 about something else, or from a list of body types', () => {
    expect(ruleFromRefusal(413, refusal('PAYLOAD_TOO_LARGE', 'too large'))).toEqual({});
    expect(ruleFromRefusal(413, '<html>413</html>')).toEqual({});
    expect(ruleFromRefusal(400, refusal('VALIDATION_ERROR', 'tax_year is invalid', { tax_year: ['must be a year'], max: 2100 }))).toEqual({});
    expect(ruleFromRefusal(415, refusal('UNSUPPORTED_MEDIA_TYPE', 'send multipart', { expected: ['multipart/form-data'] }))).toEqual({});
    expect(ruleFromRefusal(422, refusal('FILE_TOO_LARGE', 'too large', { max_bytes: 10 }))).toEqual({});
  });

  it('a known rule refuses by size or type, naming its source; without one nothing is refused', () => {
    const learned = { upload_max_bytes: { value: 10 * 1024 * 1024, learned_at: '2026-11-25T10:00:00Z', from: 'HTTP 413 FILE_TOO_LARGE' } };
    const rules = uploadRulesOf({ profileName: 'acme' }, learned);
    expect(ruleProblem(rules, 'scan.pdf', 11 * 1024 * 1024, formatBytes)).toBe(
      "is 11.0 MB, over the service's upload limit of 10.0 MB (learned from the service (HTTP 413 FILE_TOO_LARGE) on 2026-11-25)",
    );
    expect(ruleProblem(rules, 'scan.pdf', 10 * 1024 * 1024, formatBytes)).toBeUndefined();
    expect(ruleProblem(uploadRulesOf({ profileName: null }, {}), 'huge.zip', 2 ** 40, formatBytes)).toBeUndefined();
    const byHand = uploadRulesOf({ profileName: 'acme', uploadMaxBytes: 1024 * 1024, uploadTypes: ['.pdf', 'image/png'] }, learned);
    expect(ruleProblem(byHand, 'scan.pdf', 2 * 1024 * 1024, formatBytes)).toBe('is 2.0 MB, over the service\'s upload limit of 1.0 MB (set in profile "acme" (upload_max_size))');
    expect(ruleProblem(byHand, 'photo.PNG', 10, formatBytes)).toBeUndefined();
    expect(ruleProblem(byHand, 'notes.rtf', 10, formatBytes)).toBe('is of a type (.rtf, sent as application/octet-stream) the service does not take: it takes .pdf, image/png (set in profile "acme" (upload_types))');
    expect(ruleProblem(byHand, 'README', 10, formatBytes)).toMatch(/^has no file extension the service does not take/);
  });

  it('types as services and profiles name them, in one form', () => {
    expect(['PDF', '.Pdf', 'Application/PDF; charset=x', 'image/png', 'not a type!'].map(normalType)).toEqual(['.pdf', '.pdf', undefined, 'image/png', undefined]);
  });
});

describe('what was learned, per profile and base URL', () => {
  it('is kept in learned.json (0600), apart for each profile and base URL, and read back by a new store', async () => {
    const config = mkdtempSync(join(tmpdir(), 'taxprep-learned-'));
    const env = { XDG_CONFIG_HOME: config };
    const acme = openLearnedStore(env, 'acme', 'https://a.example/v1beta');
    await acme.update((known) => ({ ...known, upload_max_bytes: { value: 10, learned_at: '2026-11-25T10:00:00Z', from: 'HTTP 413 X' } }));
    expect(statSync(acme.where).mode & 0o777).toBe(0o600);
    expect(await openLearnedStore(env, 'acme', 'https://a.example/v1beta').read()).toEqual({ upload_max_bytes: { value: 10, learned_at: '2026-11-25T10:00:00Z', from: 'HTTP 413 X' } });
    expect(await openLearnedStore(env, 'acme', 'https://b.example/v1beta').read()).toEqual({});
    expect(await openLearnedStore(env, null, 'https://a.example/v1beta').read()).toEqual({});
    expect(JSON.parse(readFileSync(acme.where, 'utf8')).services['acme https://a.example/v1beta']).toMatchObject({ profile: 'acme', base_url: 'https://a.example/v1beta' });
  });

  it('a damaged file is a usage error naming it, with the fix', async () => {
    const config = mkdtempSync(join(tmpdir(), 'taxprep-learned-'));
    const store = openLearnedStore({ XDG_CONFIG_HOME: config }, 'acme', 'https://a.example/v1beta');
    mkdirSync(join(config, 'taxprep'));
    writeFileSync(store.where, '[1,');
    await expect(store.read()).rejects.toThrow(UsageError);
    await expect(store.read()).rejects.toThrow(/learned\.json, is not valid/);
  });
});

describe("a profile's upload rules set by hand", () => {
  const store = (profile: Record<string, unknown>) => async () =>
    ({ path: '/p', list: () => [], get: () => ({ name: 'acme', baseUrl: 'https://a.example/v1beta', apiKey: 'tpk_a0000000000000000000001', ...profile }), defaultName: () => 'acme' }) as unknown as ProfileStore;
  const resolve = (profile: Record<string, unknown>) => resolveSettings({ globals: {}, env: {}, profiles: store(profile) });

  it('are read and checked: a size and a list of media types or extensions', async () => {
    expect(await resolve({ uploadMaxSize: '25MB', uploadTypes: ['PDF', 'image/png'] })).toMatchObject({ uploadMaxBytes: 25 * 1024 * 1024, uploadTypes: ['.pdf', 'image/png'] });
    await expect(resolve({ uploadMaxSize: 'big' })).rejects.toThrow('upload_max_size of profile "acme" must be a size such as 25MB, 500MB or 2GB, from 1KB to 1TB');
    await expect(resolve({ uploadTypes: ['pdf', 'not a type!'] })).rejects.toThrow('upload_types of profile "acme" must be a list of media types (application/pdf) or file extensions (.pdf)');
  });
});
