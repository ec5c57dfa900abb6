import { isSea } from 'node:sea';
import { BUILD_DATE, COMMIT, VERSION } from '../../api/version';
import type { Context } from '../../types';
import { createOutput } from '../../output';

export function parseOptions(): Record<string, never> {
  return {};
}

/** What a bug report needs: which build, and what it runs on. */
function versionDocument() {
  return {
    version: VERSION,
    commit: COMMIT,
    build_date: BUILD_DATE,
    // A single executable carries its own Node: the user may have none, or another.
    runtime: isSea() ? 'single executable' : `node ${process.version}`,
    node: process.version,
    platform: `${process.platform}-${process.arch}`,
  };
}

export async function run(ctx: Context): Promise<void> {
  const document = versionDocument();
  if (ctx.globals.json) return createOutput(ctx).json(document);
  const runsOn = document.runtime === 'single executable' ? `single executable (node ${document.node}, ${document.platform})` : `${document.runtime} (${document.platform})`;
  ctx.io.stdout.write(`taxprep ${document.version}\ncommit:   ${document.commit}\nbuilt:    ${document.build_date}\nruns on:  ${runsOn}\n`);
}
