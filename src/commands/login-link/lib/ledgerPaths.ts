import { homedir } from 'node:os';
import { join } from 'node:path';
import type { Context } from '../../../context';

export const LEDGER_FILE_NAME = 'login-links.ndjson';

/**
 * Where the ledger lives unless `--ledger` says otherwise: the user's data directory, as
 * `env-paths` would name it (`$XDG_DATA_HOME/taxprep` on any platform when set).
 */
export function defaultLedgerPath(env: Record<string, string | undefined>, platform: NodeJS.Platform = process.platform): string {
  const home = env.HOME || env.USERPROFILE || homedir();
  let dataDir: string;
  if (env.XDG_DATA_HOME) dataDir = join(env.XDG_DATA_HOME, 'taxprep');
  else if (platform === 'darwin') dataDir = join(home, 'Library', 'Application Support', 'taxprep');
  else if (platform === 'win32') dataDir = join(env.LOCALAPPDATA || join(home, 'AppData', 'Local'), 'taxprep', 'Data');
  else dataDir = join(home, '.local', 'share', 'taxprep');
  return join(dataDir, LEDGER_FILE_NAME);
}

/** `--ledger PATH` when given, else the default. */
export function ledgerPathOf(ctx: Pick<Context, 'env'>, flags: { ledgerPath: string | undefined }): string {
  return flags.ledgerPath ?? defaultLedgerPath(ctx.env);
}
