import type { Jq } from 'jq-wasm';
import { UsageError } from '../errors';

/**
 * `--jq EXPRESSION`: jq 1.8 itself, compiled to WebAssembly (the jq-wasm package), loaded only
 * when the flag is given. Results print as `jq -r` prints them: strings as text, anything else as
 * JSON (pretty on a terminal, one line each otherwise).
 */
let loading: Promise<Jq> | undefined;

function jq(): Promise<Jq> {
  loading ??= import('jq-wasm').then((module) => module.loadJq());
  return loading;
}

/** jq's own message, without its `jq: error ...:` prefix and the position lines. */
function jqMessage(stderr: string): string {
  const first = stderr.split('\n')[0] ?? stderr;
  return first.replace(/^jq: error(?: \([^)]*\))?: /, '').replace(/:$/, '');
}

/** Refuses an expression jq cannot compile, before the command sends anything. */
export async function checkJqExpression(expression: string): Promise<void> {
  const { exitCode, stderr } = (await jq()).raw(null, expression);
  // 3: a compile error. Any other failure on `null` input (5) may pass on the real document.
  if (exitCode === 3) throw new UsageError(`--jq ${jqMessage(stderr)}`, { details: { '--jq': [jqMessage(stderr)] } });
}

/** What `expression` makes of `document`, as text ending in a newline (empty for no results). */
export async function applyJq(document: unknown, expression: string, pretty: boolean): Promise<string> {
  const { stdout, stderr, exitCode } = (await jq()).raw(document as object, expression, pretty ? ['-r'] : ['-r', '-c']);
  if (exitCode !== 0) throw new UsageError(`--jq ${jqMessage(stderr)}`, { details: { '--jq': [jqMessage(stderr)] } });
  return stdout === '' ? '' : `${stdout}\n`;
}
