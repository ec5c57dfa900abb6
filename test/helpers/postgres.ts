import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { connectionConfig } from '../../src/state/connection';

/**
 * A real PostgreSQL for the shared-store tests. `.ci/run` starts one (.ci/with-postgres) and sets
 * TAXPREP_TEST_POSTGRES_URL and TAXPREP_TEST_REQUIRE_POSTGRES=1: then a test fails when no
 * database answers. Elsewhere, a test file starts its own throwaway server through the same
 * script when the server binaries are installed, and skips with the reason when they are not.
 * Each test gets a database of its own (`freshDatabase`), so that test files run in parallel.
 */
export interface TestPostgres {
  /** The superuser's URL (its password in PGPASSFILE, never in the URL). */
  url: string;
  /** A new, empty database; its URL. */
  freshDatabase(): Promise<string>;
  stop(): Promise<void>;
}

const SCRIPT = fileURLToPath(new URL('../../.ci/with-postgres', import.meta.url));

function serverBinariesInstalled(): boolean {
  return existsSync('/usr/lib/postgresql') && readdirSync('/usr/lib/postgresql').some((version) => existsSync(`/usr/lib/postgresql/${version}/bin/initdb`));
}

/** Why the shared-store tests skip here, or undefined when they can run. */
export function postgresUnavailable(): string | undefined {
  if (process.env.TAXPREP_TEST_POSTGRES_URL !== undefined) return undefined;
  if (serverBinariesInstalled()) return undefined;
  const reason = 'no PostgreSQL: set TAXPREP_TEST_POSTGRES_URL or run under .ci/with-postgres';
  if (process.env.TAXPREP_TEST_REQUIRE_POSTGRES === '1') throw new Error(`TAXPREP_TEST_REQUIRE_POSTGRES=1 but ${reason}`);
  return reason;
}

/** The run's server (or one of this file's own), checked to answer. */
export async function startTestPostgres(): Promise<TestPostgres> {
  let url = process.env.TAXPREP_TEST_POSTGRES_URL;
  let server: ChildProcess | undefined;
  if (url === undefined) {
    // The script prints the variables it exports, then holds the server until its stdin closes.
    server = spawn(SCRIPT, ['node', '-e', 'console.log(JSON.stringify({url:process.env.TAXPREP_TEST_POSTGRES_URL,passfile:process.env.PGPASSFILE}));process.stdin.resume()'], { stdio: ['pipe', 'pipe', 'inherit'] });
    const started = await new Promise<{ url: string; passfile: string }>((resolve, reject) => {
      let text = '';
      server!.stdout!.on('data', (chunk: Buffer) => {
        text += chunk.toString();
        if (text.includes('\n')) resolve(JSON.parse(text.slice(0, text.indexOf('\n'))) as { url: string; passfile: string });
      });
      server!.once('exit', (code) => reject(new Error(`.ci/with-postgres ended with ${code}`)));
    });
    url = started.url;
    process.env.PGPASSFILE = started.passfile;
  }
  const admin = new pg.Client(connectionConfig(url, process.env));
  await admin.connect();
  await admin.query('SELECT 1');
  return {
    url,
    async freshDatabase() {
      const name = `taxprep_test_${randomBytes(6).toString('hex')}`;
      await admin.query(`CREATE DATABASE ${name}`);
      const parsed = new URL(url);
      parsed.pathname = `/${name}`;
      return parsed.toString();
    },
    async stop() {
      await admin.end();
      if (server !== undefined) {
        const ended = new Promise((resolve) => server!.once('exit', resolve));
        server.stdin!.end();
        await ended;
      }
    },
  };
}
