import { spawn } from 'node:child_process';
import { MissingCredentialsError, UsageError } from '../errors';
import { keyRedactor } from '../contract/apiKeys';
import { durationRule, formatDuration, parseDuration } from '../lib/duration';

/**
 * `--api-key-command`: a profile whose key is the standard output of a command (a password
 * manager's `op read ...`, `pass show ...`, `vault kv get -field=key ...`), run without a shell, at
 * most once per process, within a time limit.
 */
export const KEY_COMMAND_TIMEOUT_VARIABLE = 'TAXPREP_API_KEY_COMMAND_TIMEOUT';
/** Long enough for a password manager's unlock prompt (1Password's, a GPG pinentry), short enough that a hang ends. */
export const DEFAULT_KEY_COMMAND_TIMEOUT_MS = 30_000;

const SHELL_OPERATORS = /[|&;<>()`$*?]/;

/**
 * Words as a POSIX shell splits them, without what only a shell does: blanks separate words,
 * single quotes keep everything, double quotes keep everything but `\` before `"`, `\`, `$` or
 * a backquote, and a backslash outside quotes keeps the next character. Pipes, redirections,
 * `$`-expansions and globs are refused (they would need a shell): `sh -c '...'` runs one.
 */
export function splitCommandLine(line: string): string[] {
  const words: string[] = [];
  let word = '';
  let inWord = false;
  const refuse = (rule: string): never => {
    throw new UsageError(`--api-key-command ${rule}`, { details: { api_key_command: [rule] } });
  };
  for (let at = 0; at < line.length; at += 1) {
    const char = line[at]!;
    if (char === "'") {
      const end = line.indexOf("'", at + 1);
      if (end === -1) refuse('has an unterminated single quote');
      word += line.slice(at + 1, end);
      at = end;
      inWord = true;
    } else if (char === '"') {
      inWord = true;
      for (at += 1; ; at += 1) {
        if (at >= line.length) refuse('has an unterminated double quote');
        const inner = line[at]!;
        if (inner === '"') break;
        if (inner === '\\' && at + 1 < line.length && '"\\$`\n'.includes(line[at + 1]!)) {
          at += 1;
          if (line[at] !== '\n') word += line[at];
        } else if (inner === '$' || inner === '`') {
          refuse('is run without a shell: "$" and "`" expand nothing inside double quotes; quote them with \'...\', or run a shell: sh -c \'...\'');
        } else word += inner;
      }
    } else if (char === '\\') {
      if (at + 1 >= line.length) refuse('ends with a lone backslash');
      at += 1;
      if (line[at] !== '\n') word += line[at];
      inWord = true;
    } else if (/\s/.test(char)) {
      if (inWord) words.push(word);
      word = '';
      inWord = false;
    } else if (SHELL_OPERATORS.test(char)) {
      refuse(`is run without a shell: "${char}" would need one; quote it, or run a shell: sh -c '...'`);
    } else {
      word += char;
      inWord = true;
    }
  }
  if (inWord) words.push(word);
  if (words.length === 0) refuse('must name a command');
  return words;
}

export function keyCommandTimeoutMs(env: Record<string, string | undefined>): number {
  const text = env[KEY_COMMAND_TIMEOUT_VARIABLE];
  if (text === undefined || text === '') return DEFAULT_KEY_COMMAND_TIMEOUT_MS;
  const ms = parseDuration(text);
  if (ms === undefined || ms < 1) {
    throw new UsageError(`${KEY_COMMAND_TIMEOUT_VARIABLE} "${text}" must be ${durationRule()}, greater than 0`, { details: { [KEY_COMMAND_TIMEOUT_VARIABLE]: [`must be ${durationRule()}`] } });
  }
  return ms;
}

/** The last lines of what the command wrote to stderr: enough to say why, never a screenful. */
function stderrTail(text: string): string {
  const lines = text.trim().split('\n').slice(-3).join(' / ');
  return lines === '' ? '' : `; it said: ${lines.length > 300 ? `${lines.slice(0, 300)}…` : lines}`;
}

/** Runs of this process, by command line: a key command runs at most once however often it is asked for. */
const runs = new Map<string, Promise<string>>();

/**
 * The key the command prints (its first line, trimmed). Failure, empty output and a hang past the
 * timeout are exit 3 naming the profile; what the command wrote to stdout is never shown, what it
 * wrote to stderr is, with the key redacted should it be there.
 */
export function runKeyCommand(profile: string, line: string, env: Record<string, string | undefined>): Promise<string> {
  let run = runs.get(line);
  if (run === undefined) {
    run = startKeyCommand(profile, line, env);
    runs.set(line, run);
  }
  return run;
}

function startKeyCommand(profile: string, line: string, env: Record<string, string | undefined>): Promise<string> {
  const [program, ...args] = splitCommandLine(line);
  const timeoutMs = keyCommandTimeoutMs(env);
  const failed = (why: string) =>
    new MissingCredentialsError(`the API key command of profile "${profile}" ${why}`, {
      hint: `Run the command yourself to check it, or change it with: taxprep profiles add ${profile} --api-key-command '...'`,
    });
  return new Promise((resolve, reject) => {
    // Its own process group, so that a timeout ends what it started too (a shell's children).
    const child = spawn(program!, args, { stdio: ['ignore', 'pipe', 'pipe'], env: env as NodeJS.ProcessEnv, detached: process.platform !== 'win32', windowsHide: true });
    const stdout: Buffer[] = [];
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => stdout.push(chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      if (stderr.length < 64 * 1024) stderr += chunk;
    });
    const key = () => Buffer.concat(stdout).toString('utf8').split(/\r?\n/)[0]!.trim();
    const shown = () => stderrTail(keyRedactor(key())(stderr));
    const timer = setTimeout(() => {
      try {
        if (child.pid !== undefined) process.kill(process.platform === 'win32' ? child.pid : -child.pid, 'SIGKILL');
      } catch {
        // Already gone.
      }
      reject(failed(`(${program}) did not finish within ${formatDuration(timeoutMs)} and was stopped${shown()} (${KEY_COMMAND_TIMEOUT_VARIABLE} sets the limit)`));
    }, timeoutMs);
    child.on('error', (error: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      reject(failed(error.code === 'ENOENT' ? `could not be run: "${program}" was not found` : `could not be run: ${error.message}`));
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (code !== 0) reject(failed(`(${program}) failed (${signal === null ? `exit ${code}` : signal})${shown()}`));
      else if (key() === '') reject(failed(`(${program}) printed no key${shown()}`));
      else resolve(key());
    });
  });
}
