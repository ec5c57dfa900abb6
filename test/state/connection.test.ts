import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { connectionConfig, passwordFromFile, redactStateUrl } from '../../src/state/connection';

/** libpq's conventions for the shared store's URL (src/state/connection.ts), without a database. */

const home = () => mkdtempSync(join(tmpdir(), 'taxprep-pg-'));

describe('the state URL as printed', () => {
  it.each([
    ['postgres://ops:s3cret@db.example.com:5432/taxprep', 'postgres://ops@db.example.com:5432/taxprep'],
    ['postgresql://ops@db.example.com/taxprep?sslmode=require&password=s3cret', 'postgresql://ops@db.example.com/taxprep?sslmode=require'],
    ['not a url', '(a state URL that is not a URL)'],
  ])('%s -> %s', (url, printed) => {
    expect(redactStateUrl(url)).toBe(printed);
  });
});

describe('connection settings in libpq order: the URL, then the service, then PG* variables', () => {
  it('takes what the URL leaves out from PGHOST, PGPORT, PGUSER, PGDATABASE, PGPASSWORD, PGSSLMODE', () => {
    const config = connectionConfig('postgres:///', { PGHOST: 'db.internal', PGPORT: '6543', PGUSER: 'ops', PGDATABASE: 'team', PGPASSWORD: 'pw', PGSSLMODE: 'require' });
    expect(config).toMatchObject({ host: 'db.internal', port: 6543, user: 'ops', database: 'team', password: 'pw', ssl: { rejectUnauthorized: false } });
  });

  it('the URL wins over the environment; sslmode verify-full checks the certificate, prefer connects without TLS', () => {
    expect(connectionConfig('postgres://a@h1:1111/d1?sslmode=verify-full', { PGHOST: 'h2', PGUSER: 'b', PGSSLMODE: 'disable' })).toMatchObject({ host: 'h1', port: 1111, user: 'a', database: 'd1', ssl: { rejectUnauthorized: true } });
    expect(connectionConfig('postgres://a@h1/d1', {}).ssl).toBe(false);
  });

  it('reads a PGSERVICE (or ?service=) from PGSERVICEFILE, between the URL and the environment', () => {
    const dir = home();
    const file = join(dir, 'pg_service.conf');
    writeFileSync(file, '# teams\n[other]\nhost=wrong\n\n[taxprep]\nhost = db.service.example\nport=7000\ndbname=svc\nuser=svcuser\n');
    const env = { PGSERVICEFILE: file, PGHOST: 'env-host', PGUSER: 'env-user' };
    expect(connectionConfig('postgres:///?service=taxprep', env)).toMatchObject({ host: 'db.service.example', port: 7000, user: 'svcuser', database: 'svc' });
    expect(connectionConfig('postgres:///?user=urluser', { ...env, PGSERVICE: 'taxprep' })).toMatchObject({ host: 'db.service.example', user: 'urluser' });
    expect(() => connectionConfig('postgres:///?service=missing', env)).toThrow(`the PostgreSQL service "missing" is not defined in ${file}`);
  });

  it('refuses a URL of another scheme, naming where it came from', () => {
    expect(() => connectionConfig('mysql://db/x', {}, 'TAXPREP_STATE_URL')).toThrow('TAXPREP_STATE_URL must be a postgres:// or postgresql:// URL');
  });
});

describe('~/.pgpass', () => {
  const target = { host: 'db.example.com', port: 5432, database: 'taxprep', user: 'ops' };

  it('the first matching line wins, * matches anything, escaped colons are kept', () => {
    const dir = home();
    const file = join(dir, '.pgpass');
    writeFileSync(file, '# comment\nother.example.com:5432:*:ops:no\ndb.example.com:5432:*:ops:pa\\:ss\n*:*:*:*:fallback\n', { mode: 0o600 });
    expect(passwordFromFile(target, { HOME: dir })).toBe('pa:ss');
    expect(passwordFromFile({ ...target, user: 'someone' }, { HOME: dir })).toBe('fallback');
  });

  it('PGPASSFILE names another file; a file others can read is ignored, as libpq does', () => {
    const dir = home();
    const file = join(dir, 'pass');
    writeFileSync(file, '*:*:*:*:secret\n');
    chmodSync(file, 0o600);
    expect(passwordFromFile(target, { PGPASSFILE: file })).toBe('secret');
    chmodSync(file, 0o644);
    expect(passwordFromFile(target, { PGPASSFILE: file })).toBeUndefined();
  });

  it('is asked only when no password is given: a given one is used as it is', async () => {
    const dir = home();
    writeFileSync(join(dir, '.pgpass'), '*:*:*:*:from-file\n', { mode: 0o600 });
    const given = connectionConfig('postgres://ops@db.example.com/taxprep', { HOME: dir, PGPASSWORD: 'from-env' });
    expect(given.password).toBe('from-env');
    const looked = connectionConfig('postgres://ops@db.example.com/taxprep', { HOME: dir });
    expect(await (looked.password as () => Promise<string>)()).toBe('from-file');
  });
});
