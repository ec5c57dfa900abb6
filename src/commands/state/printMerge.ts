import type { Context } from '../../types';
import type { KindMerge } from '../../state/merge';
import { createOutput } from '../../output';

/** What `state import` or `export` copied (or would copy), per ledger: a JSON document, or a line each on stderr. */
export async function printMerge(ctx: Context, merged: ReadonlyArray<Pick<KindMerge, 'copied' | 'present'> & { kind: { label: string } }>, where: { from: string; to: string; dryRun: boolean }): Promise<void> {
  const out = createOutput(ctx);
  const ledgers = merged.map((item) => ({ ledger: item.kind.label, copied: item.copied, already_there: item.present }));
  if (ctx.globals.json) return out.json({ from: where.from, to: where.to, dry_run: where.dryRun, ledgers });
  const verb = where.dryRun ? 'would copy' : 'copied';
  const lines = ledgers.map((item) => `  ${item.ledger}: ${verb} ${item.copied}, ${item.already_there} already there`);
  await out.note(`${where.dryRun ? 'dry run: ' : ''}from ${where.from} to ${where.to}:\n${lines.join('\n')}${where.dryRun ? '\nnothing was copied' : ''}`);
}
