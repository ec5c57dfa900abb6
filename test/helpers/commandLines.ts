import { CommanderError } from 'commander';
import { buildProgram, main, parseGlobalOptions } from '../../src/cli';
import { UsageError } from '../../src/errors';
import { CapturedStream } from './context';

/**
 * Command lines as the real declarations parse them, without running anything: for the flag
 * tests (test/cli/spec-flags.test.ts) and for the command lines of the docs (docs-drift.test.ts).
 */

/** An example's command line as argv: the words after `taxprep`, up to a pipe, redirection, comment or `;`. */
export function argvOf(example: string): string[] | undefined {
  const line = example.replace(/\\\n\s*/g, '');
  if (!line.startsWith('taxprep ')) return undefined;
  const words: string[] = [];
  for (const match of line.slice('taxprep '.length).matchAll(/"([^"]*)"|'([^']*)'|(\S+)/g)) {
    const word = match[1] ?? match[2] ?? match[3]!;
    if (match[3] !== undefined && /^(\||>|>>|#|&&|\|\||2>|\))/.test(word)) break;
    if (match[3] !== undefined && word.endsWith(';')) {
      words.push(word.slice(0, -1));
      break;
    }
    words.push(word);
  }
  return words;
}

/** Parses argv with the real tree, then the global flags and the command's flags; the UsageError, if any. */
export async function refusal(argv: string[]): Promise<UsageError | undefined> {
  const program = buildProgram(
    async (load, raw) => {
      parseGlobalOptions(program.opts());
      (await load()).parseOptions(raw);
    },
    { writeOut: () => undefined, writeErr: () => undefined },
  );
  try {
    await program.parseAsync(argv, { from: 'user' });
    return undefined;
  } catch (error) {
    if (error instanceof UsageError) return error;
    throw error;
  }
}

/**
 * Why argv does not parse (an unknown command or flag, a missing argument or value, a value its
 * rule refuses), or undefined when it does. Help and --version parse.
 */
export async function parseProblem(argv: string[]): Promise<string | undefined> {
  try {
    return (await refusal(argv))?.message;
  } catch (error) {
    if (error instanceof CommanderError) return ['commander.helpDisplayed', 'commander.version'].includes(error.code) ? undefined : error.message.replace(/^error: /, '');
    throw error;
  }
}

/** What argv (help, a help topic) prints on stdout in a pipe, run in process; it must exit 0. */
export async function pipedOutput(argv: string[]): Promise<string> {
  const stdout = new CapturedStream({ isTTY: false });
  const code = await main(argv, { env: {}, io: { stdout, stderr: new CapturedStream({ isTTY: false }) } });
  if (code !== 0) throw new Error(`taxprep ${argv.join(' ')} exited ${code}`);
  return stdout.text();
}
