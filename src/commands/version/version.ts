import { VERSION } from '../../api/version';
import type { Context } from '../../types';
import { createOutput } from '../../output';

export function parseOptions(): Record<string, never> {
  return {};
}

export async function run(ctx: Context): Promise<void> {
  if (ctx.globals.json) return createOutput(ctx).json({ version: VERSION });
  ctx.io.stdout.write(`${VERSION}\n`);
}
