import { UsageError } from '../../errors';
import { durationRule, formatDuration, parseDuration } from '../../lib/duration';
import { createOutput } from '../../output';
import { EVENT_NAMES, parseEventPatterns } from '../../hooks/events';
import { generateSecret } from '../../hooks/sign';
import { hookSecretsAccount, newHookId, SECRETS_IN_STORE, secretsOf, type Hook } from '../../hooks/store';
import { CredentialStoreUnavailable } from '../../config/credentialStore';
import type { Context } from '../../types';
import type { RawInvocation } from '../types';
import { hookView, secretsLocation } from './view';
import { hooksPlaceOf } from '../../hooks/place';

export const DEFAULT_RETRY_SCHEDULE = '5s,5m,30m,2h,5h,10h,10h';
export const DEFAULT_HOOK_TIMEOUT = '15s';
export const DEFAULT_DISABLE_AFTER = '5d';

export interface AddHookOptions {
  url: string | undefined;
  exec: string | undefined;
  events: string[];
  format: 'standard' | 'text';
  headers: Array<[string, string]>;
  retryScheduleMs: number[];
  timeoutMs: number;
  rate: { requests: number; window_ms: number } | null;
  ordered: boolean;
  allowHttp: boolean;
  disableAfterMs: number;
  /** `--insecure-storage`: the secret in hooks.json (0600) instead of the credential store. */
  insecureStorage: boolean;
}

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

function refuse(flag: string, message: string, rule: string): never {
  throw new UsageError(message, { details: { [flag]: [rule] } });
}

function duration(flag: string, text: string): number {
  const ms = parseDuration(text);
  if (ms === undefined || ms < 1) refuse(flag, `${flag} "${text}" must be ${durationRule()}, greater than 0`, `must be ${durationRule()}`);
  return ms;
}

/** `https://...`, or `http://` to loopback (or anywhere with --allow-http). */
export function parseHookUrl(text: string, allowHttp: boolean): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    refuse('url', `"${text}" is not a URL; a hook's url must be an absolute http(s) URL such as https://crm.example.com/taxprep`, 'must be an absolute http(s) URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') refuse('url', `"${text}": a hook's url must use https (or http), not ${url.protocol}`, 'must be an http(s) URL');
  if (url.protocol === 'http:' && !allowHttp && !LOOPBACK.has(url.hostname)) {
    refuse('url', `"${text}": plain http is refused to any host but loopback (127.0.0.1, localhost, ::1), since the body and headers would travel unencrypted; use https, or --allow-http`, 'plain http only to loopback without --allow-http');
  }
  return url.href;
}

export function parseHeader(text: string): [string, string] {
  const colon = text.indexOf(':');
  const name = colon === -1 ? '' : text.slice(0, colon).trim();
  if (colon === -1 || !/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/.test(name)) {
    refuse('--header', `--header "${colon === -1 ? text.replace(/./g, '*') : `${name}: …`}" must be "Name: value" (a header name, a colon, the value)`, 'must be "Name: value"');
  }
  const lower = name.toLowerCase();
  if (lower.startsWith('webhook-') || lower === 'content-type') refuse('--header', `--header ${name} is set by taxprep on every delivery and cannot be replaced`, 'must not be a webhook-* or content-type header');
  return [name, text.slice(colon + 1).trim()];
}

/** `--rate 30/min`: at most 30 deliveries to this hook in any minute (units s, min, h). */
export function parseRate(text: string): { requests: number; window_ms: number } {
  const match = /^\s*(\d{1,6})\s*\/\s*(s|sec|min|m|h)\s*$/i.exec(text);
  const windows: Record<string, number> = { s: 1000, sec: 1000, min: 60_000, m: 60_000, h: 3_600_000 };
  if (match === null || Number(match[1]) < 1) refuse('--rate', `--rate "${text}" must be a number of deliveries per s, min or h, such as 30/min`, 'must be <n>/s, <n>/min or <n>/h with n >= 1');
  return { requests: Number(match[1]), window_ms: windows[match[2]!.toLowerCase()]! };
}

export function parseOptions(raw: RawInvocation): AddHookOptions {
  const { flags } = raw;
  const text = (value: unknown) => (typeof value === 'string' ? value : undefined);
  const exec = text(flags.exec);
  const given = raw.args[0] === undefined ? undefined : String(raw.args[0]);
  if ((given === undefined) === (exec === undefined)) {
    refuse('url', exec === undefined ? 'hooks add needs a url, or --exec <command>' : 'hooks add takes a url or --exec <command>, not both', 'exactly one of <url> and --exec');
  }
  const allowHttp = flags.allowHttp === true;
  const format = text(flags.format) ?? 'standard';
  if (format !== 'standard' && format !== 'text') refuse('--format', `--format "${format}" must be standard or text`, 'must be standard or text');
  const schedule = text(flags.retrySchedule) ?? DEFAULT_RETRY_SCHEDULE;
  return {
    url: given === undefined ? undefined : parseHookUrl(given, allowHttp),
    exec,
    events: text(flags.events) === undefined ? ['*'] : parseEventPatterns(text(flags.events)!),
    format,
    headers: ((flags.header as string[] | undefined) ?? []).map(parseHeader),
    retryScheduleMs: schedule.trim() === '' || schedule.trim() === 'none' ? [] : schedule.split(',').map((part) => duration('--retry-schedule', part.trim())),
    timeoutMs: duration('--timeout', text(flags.timeout) ?? DEFAULT_HOOK_TIMEOUT),
    rate: text(flags.rate) === undefined ? null : parseRate(text(flags.rate)!),
    ordered: flags.ordered === true,
    allowHttp,
    disableAfterMs: duration('--disable-after', text(flags.disableAfter) ?? DEFAULT_DISABLE_AFTER),
    insecureStorage: flags.insecureStorage === true,
  };
}

/**
 * The secret goes where the profile's key went: into the credential store, unless asked for the
 * file here or when the profile's key was put in the file on purpose (--insecure-storage).
 */
async function secretsInFile(ctx: Context, options: AddHookOptions, profile: string | null): Promise<boolean> {
  if (options.insecureStorage) return true;
  return profile !== null && (await ctx.profiles()).get(profile)?.keyStorage === 'file';
}

/** The new hook's secrets into the credential store, before the file names the hook; no store: nothing is added (exit 2). */
async function keepSecretsInStore(ctx: Context, hook: Hook): Promise<void> {
  const credentials = ctx.credentials();
  try {
    await credentials.set(hookSecretsAccount(hook), JSON.stringify(hook.secrets));
  } catch (error) {
    if (!(error instanceof CredentialStoreUnavailable)) throw error;
    throw new UsageError(`cannot keep the secret of a new hook in the ${credentials.label}: ${error.reason}; no hook was added`, {
      details: { key_storage: [error.reason] },
      hint: 'Keep it in the hooks file instead (0600): add --insecure-storage. See docs/secrets.md.',
      cause: error,
    });
  }
}

/** `taxprep hooks add`: stores a hook (0600) with a new secret, printed this once. */
export async function run(ctx: Context, options: AddHookOptions): Promise<number> {
  const place = await hooksPlaceOf(ctx);
  const { scope, store } = place;
  const now = ctx.clock.now();
  const hook: Hook = {
    id: newHookId(),
    profile: scope.profile,
    base_url: scope.baseUrl,
    ...(options.url === undefined ? { exec: options.exec } : { url: options.url }),
    events: options.events,
    format: options.format,
    headers: options.headers,
    retry_schedule_ms: options.retryScheduleMs,
    timeout_ms: options.timeoutMs,
    rate: options.rate,
    ordered: options.ordered,
    allow_http: options.allowHttp,
    disable_after_ms: options.disableAfterMs,
    secrets: [{ secret: generateSecret(), expires_at: null }],
    enabled: true,
    disabled_reason: null,
    created_at: now.toISOString(),
  };
  if (!place.secretsWithHooks && !(await secretsInFile(ctx, options, scope.profile))) {
    await keepSecretsInStore(ctx, hook);
    hook.secrets_in = SECRETS_IN_STORE;
  }
  await store.update(ctx.clock, (hooks) => hooks.push(hook));
  const out = createOutput(ctx);
  const secret = secretsOf(hook)[0]!.secret;
  if (ctx.globals.json) {
    await out.json({ ...hookView(hook, now), secret });
  } else {
    const view = hookView(hook, now);
    await out.card([
      {
        rows: [
          ['Hook', hook.id],
          [hook.url === undefined ? 'Command' : 'URL', hook.url ?? hook.exec],
          ['Events', view.events.join(', ')],
          ['Format', hook.format],
          ['Retries', view.retry_schedule.join(', ') || 'none'],
          ['Timeout', formatDuration(hook.timeout_ms)],
          ['Secret', secret],
        ],
      },
    ]);
    await out.note(`The secret is shown this once (taxprep hooks show ${hook.id} --secret prints it again); kept in ${secretsLocation(ctx, hook, place)}. Events: ${EVENT_NAMES.join(', ')}.`);
  }
  return 0;
}
