import type { Context } from '../../types';
import { UsageError } from '../../errors';
import type { RawInvocation } from '../types';
import { program } from '../tree';
import { completionScript, type Shell } from './generate';
import { SHELLS } from './register';

export interface CompletionOptions {
  shell: Shell;
}

export function parseOptions(raw: RawInvocation): CompletionOptions {
  const shell = raw.args[0];
  if (!SHELLS.includes(shell as Shell)) throw new UsageError(`shell must be one of: ${SHELLS.join(', ')}`);
  return { shell: shell as Shell };
}

export async function run(ctx: Context, options: CompletionOptions): Promise<number> {
  ctx.io.stdout.write(completionScript(program, options.shell));
  return 0;
}
