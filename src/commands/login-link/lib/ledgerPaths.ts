import { join } from 'node:path';
import type { Context } from '../../../types';
import { appDirectory } from '../../../lib/paths';

export const LEDGER_FILE_NAME = 'login-links.ndjson';

/** Where the ledger lives unless `--ledger` says otherwise: the user's data directory. */
export function defaultLedgerPath(env: Record<string, string | undefined>, platform: NodeJS.Platform = process.platform): string {
  return join(appDirectory('data', env, platform), LEDGER_FILE_NAME);
}

/** `--ledger PATH` when given, else the default. */
export function ledgerPathOf(ctx: Pick<Context, 'env'>, flags: { ledgerPath: string | undefined }): string {
  return flags.ledgerPath ?? defaultLedgerPath(ctx.env);
}
