import { PERMISSIONS } from '../../contract/endpoints';
import type { Context } from '../../types';
import { UsageError } from '../../errors';
import { fieldErrors } from '../../contract/rules';
import { definedOnly, parseFlagFields } from '../parseFlags';
import { durationSeconds, faultSettings, rateLimitWindows } from '../../mock/controls/settingsRules';
import type { FaultSettings, RateLimitWindow } from '../../mock/deps';
import type { MockServer, PrintedApiKey } from '../../mock/server';
import type { RecordedRequest, RequestLogEntry } from '../../mock/deps';
import { sanitizeLine } from '../../output/sanitize';
import { wrapText } from '../../output/wrap';
import { untilStopSignal } from '../../lib/stopSignal';
import type { RawInvocation } from '../types';
import { serve } from './register';

/** What the flags say; an absent flag is left undefined, for the mock's own default (`src/mock/server.ts`). */
export interface ServeOptions {
  host: string | undefined;
  port: number | undefined;
  seedPath: string | undefined;
  dataDir: string | undefined;
  rateLimits: RateLimitWindow[] | undefined;
  uploadMaxBytes: number | undefined;
  faults: Partial<FaultSettings>;
  /** `--simulate [seed]`: the simulation's seed; undefined when the mock only answers. */
  simulationSeed: number | undefined;
  /** Print the OpenAPI document of the service (for `--host`/`--port`) and exit, instead of serving. */
  openapi: boolean;
  /** No line per request on the terminal. */
  quiet: boolean;
}

export function parseOptions(raw: RawInvocation): ServeOptions {
  const flags = raw.flags;
  if (flags.mock !== true && flags.openapi !== true) {
    throw new UsageError('taxprep serve needs --mock: the built-in mock is the only server there is. Run `taxprep serve --mock`.');
  }
  return {
    host: optional(flagText(flags.host), parseHost),
    port: optional(flagText(flags.port), (value) => parseInteger('--port', value, 0, 65_535, ' (0 picks a free port)')),
    seedPath: nonEmpty('--seed', flagText(flags.seed)),
    dataDir: nonEmpty('--data-dir', flagText(flags.dataDir)),
    rateLimits: optional(flagText(flags.rateLimit), parseRateLimits),
    uploadMaxBytes: optional(flagText(flags.maxUploadSize), parseSize),
    faults: parseFaults(flags),
    simulationSeed: parseSimulationSeed(flags.simulate),
    openapi: flags.openapi === true,
    quiet: flags.quiet === true,
  };
}

function optional<T>(value: string | undefined, parse: (value: string) => T): T | undefined {
  return value === undefined ? undefined : parse(value);
}

function flagText(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

function nonEmpty(flag: string, value: string | undefined): string | undefined {
  if (value !== undefined && value.trim() === '') throw new UsageError(`${flag} must not be empty.`);
  return value;
}

/** The seed a bare `--simulate` stands for. */
const DEFAULT_SIMULATION_SEED = 1;

/**
 * `--simulate` alone or `--simulate N`. The seed is a flag value of its own because `--seed` already
 * names the fixture file the records start from.
 */
function parseSimulationSeed(value: unknown): number | undefined {
  if (value === undefined || value === false) return undefined;
  if (value === true) return DEFAULT_SIMULATION_SEED;
  return parseInteger('--simulate', String(value), 0, 999_999_999, ' (the simulation\'s seed)');
}

function parseHost(value: string): string {
  if (!/^[A-Za-z0-9.:-]+$/.test(value)) {
    throw new UsageError(`--host must be a host name or an IP address such as 127.0.0.1; got "${value}".`);
  }
  return value;
}

function parseInteger(flag: string, value: string, min: number, max: number, unit = ''): number {
  const parsed = /^\d{1,9}$/.test(value.trim()) ? Number(value.trim()) : NaN;
  if (!(parsed >= min && parsed <= max)) {
    throw new UsageError(`${flag} must be an integer from ${min} to ${max}${unit}; got "${value}".`);
  }
  return parsed;
}

/** The fault flags, by the rules of `PUT /_mock/faults`. */
function parseFaults(flags: Record<string, unknown>): Partial<FaultSettings> {
  const fraction = (value: string | undefined) => (value !== undefined && /^\d*\.?\d+$/.test(value.trim()) ? Number(value.trim()) : value);
  const faults = parseFlagFields(faultSettings, serve.flags!, {
    latency: flagText(flags.latency),
    errorRate: fraction(flagText(flags.errorRate)),
    dropRate: fraction(flagText(flags.dropRate)),
  });
  return definedOnly({ latencyMs: faults.latency_ms, errorRate: faults.error_rate, dropRate: faults.drop_rate });
}

const RATE_LIMIT_GRAMMAR =
  'must be "off" or windows like 100/60s,10000/1d (requests/length, the length in d, h, m and s such as 90s or 1h30m, a bare unit meaning 1 of it)';

/**
 * `off`, or comma-separated `<requests>/<length>` windows such as `100/60s,10000/1d`; the numbers
 * obey the rules of `PUT /_mock/rate-limits`, and the length is a duration as `/_mock/clock` reads it.
 */
export function parseRateLimits(value: string): RateLimitWindow[] {
  if (value.trim().toLowerCase() === 'off') return [];
  const windows = value.split(',').map((part) => {
    const [requests, length, ...rest] = part.trim().split('/');
    const seconds = length === undefined ? undefined : durationSeconds(/^[smhd]$/i.test(length.trim()) ? `1${length.trim()}` : length);
    if (rest.length > 0 || !/^\d+$/.test(requests ?? '') || seconds === undefined) {
      throw new UsageError(`--rate-limit ${RATE_LIMIT_GRAMMAR}; got "${part.trim()}".`);
    }
    return { limit: requests, window_seconds: seconds };
  });
  const parsed = rateLimitWindows.safeParse(windows);
  if (!parsed.success) {
    const problems = Object.entries(fieldErrors(parsed.error)).map(([field, messages]) => `${describeWindowField(field, value)} ${messages.join('; ')}`);
    throw new UsageError(`--rate-limit: ${problems.join('; ')}; got "${value.trim()}".`);
  }
  return parsed.data.map((window) => ({ limit: window.limit, windowSeconds: window.window_seconds }));
}

/** `1.window_seconds` -> `the length (in seconds) of window 2 (1/400d)`: the control's field path in the flag's words. */
function describeWindowField(field: string, value: string): string {
  const [index, name] = field.split('.');
  const part = value.split(',')[Number(index)]?.trim();
  if (name === undefined || part === undefined) return 'the list of windows';
  return `${name === 'limit' ? 'the number of requests' : 'the length (in seconds)'} of window ${Number(index) + 1} (${part})`;
}

const BYTES_PER_UNIT: Record<string, number> = { '': 1, b: 1, k: 1024, kb: 1024, m: 1024 ** 2, mb: 1024 ** 2, g: 1024 ** 3, gb: 1024 ** 3 };

/** A size in bytes: `100mb`, `512kb`, `1gb` (powers of 1024) or a plain number of bytes. */
export function parseSize(value: string): number {
  const match = /^(\d+(?:\.\d+)?)\s*([a-z]*)$/i.exec(value.trim());
  const multiplier = BYTES_PER_UNIT[match?.[2]?.toLowerCase() ?? ''];
  const bytes = match && multiplier !== undefined ? Math.floor(Number(match[1]) * multiplier) : NaN;
  if (!(bytes >= 1 && bytes <= Number.MAX_SAFE_INTEGER)) {
    throw new UsageError(`--max-upload-size must be a size such as 100mb, 512kb or 1gb (at least 1 byte); got "${value}".`);
  }
  return bytes;
}

export async function run(ctx: Context, options: ServeOptions): Promise<number> {
  if (options.openapi) return printOpenApi(ctx, options);
  const { createMockServer, DataDirError, DEFAULT_HOST, DEFAULT_PORT, entryOf } = await import('../../mock/server');
  const fixture = options.seedPath === undefined ? undefined : await loadSeed(options.seedPath);
  const host = options.host ?? DEFAULT_HOST;
  const port = options.port ?? DEFAULT_PORT;
  // A line per request in text mode; under --json stdout holds the start-up record alone.
  const printer = options.quiet || ctx.globals.json ? undefined : requestPrinter(ctx.io.stdout, entryOf);
  let server: MockServer;
  try {
    server = await createMockServer({
      ...definedOnly({
        fixture,
        dataDir: options.dataDir,
        rateLimits: options.rateLimits,
        uploadMaxBytes: options.uploadMaxBytes,
        simulationSeed: options.simulationSeed,
      }),
      host,
      port,
      faults: options.faults,
      ...definedOnly({ onRequest: printer?.record }),
      onInternalError: (error) => ctx.io.stderr.write(`mock: unexpected failure (answered 500): ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`),
      onStorageFull: (line) => ctx.io.stderr.write(`mock: ${line}\n`),
      onDataDirNotice: (line) => ctx.io.stderr.write(`mock: ${line}\n`),
    });
  } catch (error) {
    // A data directory that cannot be used (unreadable, damaged, in use) is the user's to fix, like a bad flag.
    if (error instanceof DataDirError) throw new UsageError(`--data-dir: ${error.message}`);
    throw listenError(error, host, port) ?? error;
  }

  // Listening for signals before announcing the server: a script may stop it the moment it reads the line.
  const stopRequested = untilStopSignal();
  const width = ctx.io.stdoutIsTTY ? ctx.io.columns : 80;
  ctx.io.stdout.write(ctx.globals.json ? `${JSON.stringify(startupRecord(server, options))}\n` : wrapText(startupText(server, options, printer !== undefined), width));
  await stopRequested;
  await server.close();
  printer?.flush();
  if (!ctx.globals.json) ctx.io.stderr.write('Mock service stopped.\n');
  return 0;
}

/** The document the mock would serve at `{base_url}/openapi.json`, for the address the flags give. */
async function printOpenApi(ctx: Context, options: ServeOptions): Promise<number> {
  const [{ openApiDocument }, { DEFAULT_HOST, DEFAULT_PORT, DEFAULT_UPLOAD_MAX_BYTES, baseUrlOf }] = await Promise.all([import('../../contract/openapi'), import('../../mock/server')]);
  const baseUrl = baseUrlOf(options.host ?? DEFAULT_HOST, options.port ?? DEFAULT_PORT);
  ctx.io.stdout.write(`${JSON.stringify(openApiDocument({ baseUrl, uploadMaxBytes: options.uploadMaxBytes ?? DEFAULT_UPLOAD_MAX_BYTES }), null, 2)}\n`);
  return 0;
}

async function loadSeed(path: string) {
  const { loadFixtureFile, FixtureError } = await import('../../mock/server');
  try {
    return await loadFixtureFile(path);
  } catch (error) {
    if (error instanceof FixtureError) throw new UsageError(`--seed: ${error.message}`);
    throw error;
  }
}

/** A failure to listen is the user's to fix (another port or host): exit 2, like any bad flag. */
function listenError(error: unknown, host: string, port: number): UsageError | undefined {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'EADDRINUSE') {
    return new UsageError(`Port ${port} on ${host} is already in use. Choose another with --port, or --port 0 for a free one.`);
  }
  if (code === 'EACCES') return new UsageError(`Not allowed to listen on ${host}:${port}; ports below 1024 need privileges. Choose another --port.`);
  if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND') {
    return new UsageError(`--host ${host} is not an address of this machine; use 127.0.0.1 (the default) or 0.0.0.0.`);
  }
  return undefined;
}

function startupRecord(server: MockServer, options: ServeOptions) {
  return {
    base_url: server.baseUrl,
    app_url: server.appUrl,
    keys: server.keys,
    data_dir: options.dataDir ?? null,
    simulation_seed: options.simulationSeed ?? null,
  };
}

/**
 * A line per request for the mock's terminal: `00:31:12  GET     200     3 ms  tpk_…0001  /v1beta/accounts/1001`.
 * Recording costs a push; the lines are formatted and written once per turn of the event loop, in
 * one write, so that printing takes little from the requests themselves.
 */
export function requestPrinter(stdout: Pick<NodeJS.WritableStream, 'write'>, entryOf: (request: RecordedRequest) => RequestLogEntry) {
  let pending: RecordedRequest[] = [];
  let scheduled: NodeJS.Immediate | undefined;
  const flush = () => {
    if (scheduled !== undefined) clearImmediate(scheduled);
    scheduled = undefined;
    if (pending.length === 0) return;
    const batch = pending;
    pending = [];
    stdout.write(batch.map((request) => requestLine(entryOf(request))).join(''));
  };
  return {
    record: (request: RecordedRequest) => {
      pending.push(request);
      scheduled ??= setImmediate(flush);
    },
    flush,
  };
}

function requestLine(entry: RequestLogEntry): string {
  const time = entry.at.slice(11, 19);
  const status = entry.status === null ? 'drop' : String(entry.status);
  return `${time}  ${entry.method.padEnd(6)}  ${status.padEnd(4)}  ${`${entry.duration_ms} ms`.padStart(7)}  ${(entry.api_key ?? '-').padEnd(9)}  ${sanitizeLine(entry.path)}\n`;
}

function startupText(server: MockServer, options: ServeOptions, printsRequests: boolean): string {
  const keyWidth = Math.max(...server.keys.map((key) => key.key.length));
  return [
    'taxprep mock service is running.',
    `  Base URL:  ${server.baseUrl}`,
    `  App URL:   ${server.appUrl}`,
    `  Controls:  ${server.appUrl}/_mock`,
    `  Data:      ${options.dataDir ?? 'in memory (gone when stopped)'}`,
    `  Limits:    ${describeLimits(server.deps.settings.rateLimits)}`,
    ...(options.simulationSeed === undefined
      ? []
      : [`  Simulate:  seed ${options.simulationSeed}, a preparer's step per virtual hour`]),
    '',
    'API keys (shown only here; the mock stores their SHA-256):',
    // The key first and whole, to copy; its label, then what it may do, under it (80 columns).
    ...server.keys.flatMap((key) => [
      `  ${key.key.padEnd(keyWidth)}  ${key.label}, partner ${key.partner_id}`,
      `  ${' '.repeat(keyWidth)}  ${describeKey(key, server.deps.clock.now())}`,
    ]),
    '',
    `Try: taxprep health --base-url ${server.baseUrl}`,
    'Stop with Ctrl+C.',
    ...(printsRequests ? ['Requests are listed below as they are answered (--quiet for none).'] : []),
    '',
  ].join('\n');
}

function describeLimits(windows: RateLimitWindow[]): string {
  return windows.length === 0 ? 'off' : windows.map((window) => `${window.limit} per ${window.windowSeconds}s`).join(', ');
}

function describeKey(key: PrintedApiKey, now: Date): string {
  const scope = PERMISSIONS.every((permission) => key.permissions.includes(permission)) ? 'all permissions' : key.permissions.join(' ') || 'no permissions';
  if (key.expires_at === null) return scope;
  const expired = Date.parse(key.expires_at) <= now.getTime();
  // To the minute, in UTC (`2025-01-01T00:00Z`): short enough for the line under the key.
  return `${scope}; ${expired ? 'expired' : 'expires'} ${key.expires_at.slice(0, 16)}Z`;
}
