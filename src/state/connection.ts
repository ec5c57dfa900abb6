import { readFileSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { ClientConfig } from 'pg';
import { CliError, StateStoreError, UsageError } from '../errors';

type Env = Record<string, string | undefined>;

/**
 * How taxprep reaches the shared store: a `postgres://` URL with libpq's conventions, so that a
 * team's existing setup works as it does for psql. In libpq's order, a parameter comes from the
 * URL, else the service named by `?service=` or PGSERVICE (pg_service.conf), else the environment
 * (PGHOST, PGPORT, PGUSER, PGDATABASE, PGPASSWORD, PGSSLMODE), else the defaults; a password found
 * nowhere is looked up in ~/.pgpass (or PGPASSFILE) by the client (`pg`, through `pgpass`).
 * A password is never printed: every message shows `redactStateUrl`.
 */

/** The URL as printed: without its password (and without a `password` parameter). */
export function redactStateUrl(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.password = '';
    parsed.searchParams.delete('password');
    return parsed.toString().replace(/\?$/, '');
  } catch {
    return '(a state URL that is not a URL)';
  }
}

const URL_RULE = 'must be a postgres:// or postgresql:// URL such as postgres://taxprep@db.example.com:5432/taxprep';

/** The libpq parameters taxprep reads, by their libpq names. */
interface Parameters {
  host?: string;
  port?: string;
  user?: string;
  password?: string;
  dbname?: string;
  sslmode?: string;
  sslrootcert?: string;
  service?: string;
}
const PARAMETER_NAMES: ReadonlyArray<keyof Parameters> = ['host', 'port', 'user', 'password', 'dbname', 'sslmode', 'sslrootcert', 'service'];
const ENVIRONMENT: Record<Exclude<keyof Parameters, 'service'>, string> = {
  host: 'PGHOST',
  port: 'PGPORT',
  user: 'PGUSER',
  password: 'PGPASSWORD',
  dbname: 'PGDATABASE',
  sslmode: 'PGSSLMODE',
  sslrootcert: 'PGSSLROOTCERT',
};

function fromUrl(url: string, where: string): Parameters {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new UsageError(`${where} ${URL_RULE}`, { details: { state_url: [URL_RULE] } });
  }
  if (parsed.protocol !== 'postgres:' && parsed.protocol !== 'postgresql:') throw new UsageError(`${where} ${URL_RULE}`, { details: { state_url: [URL_RULE] } });
  const parameters: Parameters = {};
  if (parsed.hostname !== '') parameters.host = decodeURIComponent(parsed.hostname);
  if (parsed.port !== '') parameters.port = parsed.port;
  if (parsed.username !== '') parameters.user = decodeURIComponent(parsed.username);
  if (parsed.password !== '') parameters.password = decodeURIComponent(parsed.password);
  const dbname = decodeURIComponent(parsed.pathname.replace(/^\//, ''));
  if (dbname !== '') parameters.dbname = dbname;
  for (const name of PARAMETER_NAMES) {
    const value = parsed.searchParams.get(name);
    if (value !== null && value !== '') parameters[name] = value;
  }
  return parameters;
}

/**
 * The section `service` of the first service file that has it: PGSERVICEFILE or
 * ~/.pg_service.conf, then PGSYSCONFDIR/pg_service.conf, as libpq reads them (`key=value` lines
 * under `[name]`, `#` comments).
 */
export function serviceParameters(service: string, env: Env): Parameters {
  const home = env.HOME ?? homedir();
  const files = [env.PGSERVICEFILE ?? join(home, '.pg_service.conf'), ...(env.PGSYSCONFDIR === undefined ? [] : [join(env.PGSYSCONFDIR, 'pg_service.conf')])];
  for (const file of files) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    const found = serviceSection(text, service);
    if (found !== undefined) return found;
  }
  throw new UsageError(`the PostgreSQL service "${service}" is not defined in ${files.join(' or ')}`, {
    hint: 'Define it in ~/.pg_service.conf (or PGSERVICEFILE), or give the host and database in the state URL.',
  });
}

function serviceSection(text: string, service: string): Parameters | undefined {
  let inSection = false;
  let found: Parameters | undefined;
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const section = /^\[(.+)\]$/.exec(line);
    if (section) {
      inSection = section[1]!.trim() === service;
      if (inSection) found ??= {};
      continue;
    }
    const equals = line.indexOf('=');
    if (!inSection || equals === -1) continue;
    const key = line.slice(0, equals).trim() as keyof Parameters;
    if (PARAMETER_NAMES.includes(key) && key !== 'service') found![key] = line.slice(equals + 1).trim();
  }
  return found;
}

/** The client's configuration for a state URL, in libpq's order (see above). */
export function connectionConfig(url: string, env: Env, where = 'the state URL'): ClientConfig {
  const given = fromUrl(url, where);
  const serviceName = given.service ?? env.PGSERVICE;
  const service = serviceName === undefined || serviceName === '' ? {} : serviceParameters(serviceName, env);
  const value = (name: Exclude<keyof Parameters, 'service'>): string | undefined => given[name] ?? service[name] ?? (env[ENVIRONMENT[name]] || undefined);
  const port = value('port');
  const config: ClientConfig = {
    host: value('host') ?? 'localhost',
    port: port === undefined ? 5432 : Number(port),
    user: value('user') ?? env.USER ?? env.LOGNAME,
    database: value('dbname') ?? value('user') ?? env.USER,
    application_name: 'taxprep',
    connectionTimeoutMillis: 10_000,
    // Set so that the client takes nothing from its own process environment.
    ssl: sslOf(value('sslmode'), value('sslrootcert')),
  };
  const password = value('password');
  // Given as a function, so that the client never reads its own environment's ~/.pgpass.
  config.password = password !== undefined ? password : async () => passwordFromFile(config, env) ?? '';
  return config;
}

/**
 * The password for this host, port, database and user in PGPASSFILE or ~/.pgpass, as libpq reads
 * it: `host:port:database:user:password` lines, `*` matching anything, `\:` and `\\` escaped; a
 * file others can read is ignored, as libpq does.
 */
export function passwordFromFile(config: Pick<ClientConfig, 'host' | 'port' | 'database' | 'user'>, env: Env): string | undefined {
  const file = env.PGPASSFILE || join(env.HOME ?? homedir(), '.pgpass');
  let text: string;
  try {
    if (process.platform !== 'win32' && (statSync(file).mode & 0o077) !== 0) return undefined;
    text = readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
  const wanted = [config.host ?? 'localhost', String(config.port ?? 5432), config.database ?? '', config.user ?? ''];
  for (const line of text.split(/\r?\n/)) {
    if (line.trim() === '' || line.startsWith('#')) continue;
    const fields = line.split(/(?<!\\):/).map((field) => field.replace(/\\([:\\])/g, '$1'));
    if (fields.length < 5) continue;
    const matches = wanted.every((value, index) => fields[index] === '*' || fields[index] === value || (index === 0 && fields[0] === 'localhost' && value.startsWith('/')));
    if (matches) return fields.slice(4).join(':');
  }
  return undefined;
}

/**
 * libpq's sslmode as the client takes it: `require` encrypts without checking the certificate,
 * `verify-ca` checks it against the root (sslrootcert), `verify-full` checks the host name too.
 * `disable`, `allow` and `prefer` (libpq's default) connect without TLS: the client cannot fall
 * back from one to the other, so a store that needs TLS says `sslmode=require` (docs/team.md).
 */
function sslOf(mode: string | undefined, rootCert: string | undefined): ClientConfig['ssl'] {
  const ca = rootCert === undefined ? undefined : readFileSync(rootCert, 'utf8');
  switch (mode ?? 'prefer') {
    case 'disable':
    case 'allow':
    case 'prefer':
      return false;
    case 'require':
      return { rejectUnauthorized: false };
    case 'verify-ca':
      return { rejectUnauthorized: true, ...(ca === undefined ? {} : { ca }), checkServerIdentity: () => undefined };
    case 'verify-full':
      return { rejectUnauthorized: true, ...(ca === undefined ? {} : { ca }) };
    default:
      throw new UsageError(`sslmode "${mode}" must be one of disable, allow, prefer, require, verify-ca, verify-full`, { details: { sslmode: ['must be a libpq sslmode'] } });
  }
}

/** What went wrong, in words, and what to do, by PostgreSQL's SQLSTATE class or the socket's code. */
function diagnosis(error: unknown): { what: string; todo: string } {
  const code = (error as { code?: string }).code ?? '';
  const message = error instanceof Error ? error.message : String(error);
  if (code === '28P01' || code === '28000') return { what: `refused the role (${message})`, todo: 'Check the user and its password (PGPASSWORD, ~/.pgpass) and pg_hba.conf.' };
  if (/password must be a non-empty string/.test(message)) return { what: 'asked for a password and none was found', todo: 'Give it in PGPASSWORD, ~/.pgpass (or PGPASSFILE) or the service file; never in the URL of a flag.' };
  if (code === '3D000') return { what: `has no such database (${message})`, todo: 'Create the database, or name the right one in the state URL.' };
  if (code === '42501') return { what: `refused the role a permission (${message})`, todo: 'Grant the role the rights docs/team.md lists, or run `taxprep state migrate` with the owner role.' };
  if (code.startsWith('53')) return { what: `is out of room (${code}: ${message})`, todo: 'Free space on the database server; nothing unrecorded was sent: run again then.' };
  if (code.startsWith('57P') || code.startsWith('08') || /connection error|not queryable|Connection terminated unexpectedly/.test(message)) return { what: `closed the connection (${code}: ${message})`, todo: 'The database restarted or went away; nothing unrecorded was sent: run again when it is back.' };
  if (/^E[A-Z]+$/.test(code)) return { what: `could not be reached (${code})`, todo: 'Check that the database is up and the host and port are right; nothing was sent that was not recorded: run again when it is back.' };
  if (/Connection terminated|timeout/i.test(message)) return { what: `did not answer (${message})`, todo: 'Check that the database is up and reachable; nothing unrecorded was sent: run again when it is back.' };
  return { what: `failed (${code === '' ? message : `${code}: ${message}`})`, todo: 'Run again; if it persists, see docs/team.md.' };
}

/** A failure of the store as the user sees it: exit 13, naming the store (without its password) and what to do. */
export function storeError(error: unknown, store: string): unknown {
  // Already a message of ours (a refused lock, a newer schema, a bad URL).
  if (error instanceof CliError) return error;
  const { what, todo } = diagnosis(error);
  const code = (error as { code?: string }).code;
  return new StateStoreError(`the shared state store ${store} ${what}`, { details: { store, ...(code === undefined ? {} : { sqlstate_or_errno: code }) }, hint: todo, cause: error });
}
