import type { Context } from '../types';
import type { RawInvocation } from '../commands/types';
import { showHelp } from './topics';

export interface HelpOptions {
  words: string[];
}

export function parseOptions(raw: RawInvocation): HelpOptions {
  return { words: (raw.args[0] as string[] | undefined) ?? [] };
}

export async function run(ctx: Context, options: HelpOptions): Promise<void> {
  // The tree is built afresh (its actions never run) to print on this context's streams.
  const { buildProgram } = await import('../cli');
  const write = (text: string) => void ctx.io.stdout.write(text);
  const helpWidth = ctx.io.stdoutIsTTY ? ctx.io.columns : undefined;
  showHelp(buildProgram(async () => undefined, { writeOut: write, writeErr: write, helpWidth }), options.words);
}
