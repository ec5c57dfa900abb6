import { readFile } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import type { Context } from '../../types';
import { EXIT, exitCodeForStatus, UsageError } from '../../errors';
import { NOT_THE_API_MESSAGE } from '../../api/errors';
import { ErrorBody } from '../../contract/errors';
import { createOutput, wrapMessage } from '../../output';
import { formatJson, formatNdjsonLine } from '../../output/json';
import { sanitizeText } from '../../output/sanitize';
import type { RawInvocation } from '../types';

export interface ApiOptions {
  method: string;
  path: string;
  query: Record<string, string>;
  /** Fields for the JSON body; mutually exclusive with `input`. */
  fields: Record<string, unknown> | undefined;
  /** `-` for stdin, else a file path. */
  input: string | undefined;
}

const HINT = 'Run `taxprep api --help` for examples.';

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.map(String) : [];
}

/** `key=value` -> [key, value]; the first `=` splits, so values may contain `=`. */
function splitPair(pair: string, flag: string): [string, string] {
  const at = pair.indexOf('=');
  if (at <= 0) throw new UsageError(`${flag} "${pair}" must be key=value`, { details: { [flag]: ['must be key=value'] }, hint: HINT });
  return [pair.slice(0, at), pair.slice(at + 1)];
}

/** `-f` values: JSON literals (numbers, true, false, null) typed, anything else a string. */
export function typedValue(text: string): unknown {
  if (text === 'true') return true;
  if (text === 'false') return false;
  if (text === 'null') return null;
  if (/^-?(0|[1-9]\d*)(\.\d+)?$/.test(text)) return Number(text);
  return text;
}

/**
 * Sets `a.b.c` in `target`, creating objects on the way. The objects have no prototype, so every
 * key is plain data (`-f __proto__.x=1` sends `{"__proto__": {"x": 1}}` and touches nothing).
 */
function setPath(target: Record<string, unknown>, key: string, value: unknown): void {
  const parts = key.split('.');
  let node = target;
  for (const part of parts.slice(0, -1)) {
    const next = Object.hasOwn(node, part) ? node[part] : undefined;
    if (next !== undefined && (typeof next !== 'object' || next === null || Array.isArray(next))) {
      throw new UsageError(`--field "${key}" conflicts with an earlier field "${part}"`, { hint: HINT });
    }
    if (next === undefined) node[part] = Object.create(null);
    node = node[part] as Record<string, unknown>;
  }
  node[parts.at(-1)!] = value;
}

export function parseOptions(raw: RawInvocation): ApiOptions {
  const method = String(raw.args[0] ?? '').toUpperCase();
  if (!/^[A-Z]+$/.test(method)) throw new UsageError(`method "${String(raw.args[0])}" must be an HTTP method such as GET or POST`, { hint: HINT });
  const path = String(raw.args[1] ?? '');
  const query: Record<string, string> = Object.fromEntries(strings(raw.flags.query).map((pair) => splitPair(pair, '--query')));
  const typed = strings(raw.flags.field).map((pair) => splitPair(pair, '--field'));
  const plain = strings(raw.flags.rawField).map((pair) => splitPair(pair, '--raw-field'));
  const input = typeof raw.flags.input === 'string' ? raw.flags.input : undefined;
  let fields: Record<string, unknown> | undefined;
  if (typed.length > 0 || plain.length > 0) {
    if (input !== undefined) throw new UsageError('--input and --field/--raw-field cannot be combined: the body comes from one of them', { hint: HINT });
    if (method === 'GET' || method === 'HEAD') throw new UsageError(`a ${method} request has no body: give parameters with --query`, { hint: HINT });
    fields = Object.create(null) as Record<string, unknown>;
    for (const [key, value] of typed) setPath(fields, key, typedValue(value));
    for (const [key, value] of plain) setPath(fields, key, value);
  }
  return { method, path, query, fields, input };
}

async function readAll(stream: Readable): Promise<string> {
  let text = '';
  for await (const chunk of stream) text += typeof chunk === 'string' ? chunk : (chunk as Buffer).toString('utf8');
  return text;
}

async function readBody(ctx: Context, input: string): Promise<unknown> {
  const where = input === '-' ? 'stdin' : input;
  let text: string;
  try {
    text = input === '-' ? await readAll(ctx.io.stdin) : await readFile(input, 'utf8');
  } catch (error) {
    throw new UsageError(`cannot read --input ${where}: ${(error as Error).message}`, { hint: HINT });
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new UsageError(`--input ${where} is not JSON`, { hint: HINT });
  }
}

/** `--json` is implied: the answer is printed as the service sent it, whatever the flags. */
export async function run(ctx: Context, options: ApiOptions): Promise<number> {
  const body = options.input !== undefined ? await readBody(ctx, options.input) : options.fields;
  const api = await ctx.api();
  const answer = await api.raw(options.method, options.path, { query: options.query, body });
  const ok = answer.status >= 200 && answer.status < 300;
  if (!ok) {
    // One line in a pipe, for a program. On a terminal laid out as stdout's JSON is and wrapped at
    // word boundaries: a line longer than the terminal wraps inside words (`is req` / `uired`).
    const body = answer.json === undefined ? `HTTP ${answer.status}${answer.text ? `: ${sanitizeText(answer.text)}` : ''}\n` : ctx.io.stderrIsTTY ? formatJson(answer.json, true) : formatNdjsonLine(answer.json);
    ctx.io.stderr.write(wrapMessage(ctx.io, body));
    const contractError = ErrorBody.safeParse(answer.json);
    if (!contractError.success && answer.status === 404) {
      await createOutput(ctx).note(`${NOT_THE_API_MESSAGE}, or the path`);
      return EXIT.NOT_THE_API;
    }
    return exitCodeForStatus(answer.status, contractError.success ? contractError.data.error.code : '');
  }
  if (answer.json !== undefined) await createOutput(ctx).json(answer.json);
  else if (answer.text !== '') ctx.io.stdout.write(sanitizeText(answer.text.endsWith('\n') ? answer.text : `${answer.text}\n`));
  return EXIT.OK;
}
