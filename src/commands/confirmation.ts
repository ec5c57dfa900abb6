import { UsageError } from '../errors';
import { askYesNo } from '../io';
import type { Context } from '../types';

/** Whether `confirmBeforeActing` asks: a terminal on stderr and stdin, no --yes (a dry run plans by it). */
export function willAsk(ctx: Context, yes: boolean): boolean {
  // A terminal's stdin already read to its end (`--from -` typed by hand) has no answer left to give.
  return !yes && ctx.io.stderrIsTTY && ctx.io.stdinIsTTY && !ctx.io.stdin.readableEnded;
}

/**
 * Says what a command is about to do to people (who is emailed, which working links stop
 * working) when stderr is a terminal, and asks before doing it when stdin is one too: never in a
 * pipe or cron, and `--yes` skips both. `statement` is called only when it will be shown, told
 * whether a question follows (so that it may spend a request on a name only then); it answers
 * undefined when nothing touches a person, and then nothing is said or asked. A "no" ends the
 * command with exit 2 before anything is sent; true means a person read the statement and said yes.
 */
export async function confirmBeforeActing(ctx: Context, yes: boolean, statement: (asking: boolean) => Promise<string[] | undefined>): Promise<boolean> {
  if (yes || !ctx.io.stderrIsTTY) return false;
  const asking = willAsk(ctx, yes);
  const lines = await statement(asking);
  if (lines === undefined) return false;
  ctx.io.stderr.write(`${lines.join('\n')}\n`);
  if (!asking) return false;
  if (!(await askYesNo(ctx.io, 'Continue?'))) {
    throw new UsageError('cancelled at the prompt; nothing was sent', { hint: 'Pass --yes to act without being asked.' });
  }
  return true;
}
