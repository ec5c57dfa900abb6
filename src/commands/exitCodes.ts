import { EXIT, EXIT_CODE_MEANINGS, type ExitName } from '../errors';
import type { CommandSpec } from './spec';

/**
 * The exit codes a command can end with, as its declaration records them (`exitCodes`) and its
 * man page, docs/commands/ page and `--help` list them. A declaration names, by their names in
 * EXIT, only what its command adds to EVERY_COMMAND; a command that sends requests adds one of the
 * lists below. The end-to-end tests hold every command to its list (test/helpers/exitCodes.ts).
 */

/** A code a command can add to those of every command. */
export type ExitCodeName = Exclude<ExitName, 'OK'>;

/** A code a command adds, with what it means there when that says more than the general meaning. */
export type ExitCodeSpec = ExitCodeName | readonly [name: ExitCodeName, meaning: string];

/** Any command: help and a bad command line (2), a bug (1), and an output that cannot be written (74, 141). */
export const EVERY_COMMAND: readonly ExitName[] = ['OK', 'INTERNAL', 'USAGE', 'OUTPUT_FAILED', 'OUTPUT_CLOSED'];

/** A command that sends requests to the service: no answer, a failing or rate-limiting service, a wrong base URL, a safety limit. */
export const SERVICE: readonly ExitCodeName[] = ['RATE_LIMITED', 'NETWORK', 'SERVER', 'NOT_THE_API', 'LIMIT'];

/** A command that sends requests with the API key: also no key, or a key the service refuses. */
export const SERVICE_WITH_KEY: readonly ExitCodeName[] = ['AUTH', ...SERVICE];

/** A command that reads or writes taxprep's state (ledgers): with a state URL, the shared store may fail. */
export const STATE: readonly ExitCodeName[] = ['STATE_STORE'];

export interface ExitCodeRow {
  code: number;
  name: ExitName;
  meaning: string;
}

const MEANINGS = new Map(EXIT_CODE_MEANINGS);

/** Every code `spec` can end with, by number (a name's own meaning when the declaration gives one). */
export function exitCodesOf(spec: CommandSpec): ExitCodeRow[] {
  const rows = new Map<ExitName, string>(EVERY_COMMAND.map((name) => [name, MEANINGS.get(name)!]));
  for (const entry of spec.exitCodes ?? []) {
    const [name, meaning] = typeof entry === 'string' ? [entry, MEANINGS.get(entry)!] : entry;
    rows.set(name, meaning);
  }
  return [...rows].map(([name, meaning]) => ({ code: EXIT[name], name, meaning })).sort((a, b) => a.code - b.code || a.name.localeCompare(b.name));
}
