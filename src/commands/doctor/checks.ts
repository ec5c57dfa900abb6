import type { ExitCode } from '../../errors';

/**
 * One line of `taxprep doctor`'s checklist. `ok` and `warn` pass (a warning is worth fixing but
 * nothing fails because of it); `fail` carries the exit code of its class; `skip` says why a check
 * could not run (an earlier one failed, `--offline`).
 */
export type CheckStatus = 'ok' | 'warn' | 'fail' | 'skip';

export const CHECK_GROUPS = {
  base_url: 'Base URL',
  tls: 'TLS',
  key: 'Key',
  clock: 'Clock',
  quota: 'Quota',
  names: 'Open names',
  rules: 'Known rules',
  local: 'Local',
  state: 'Shared state',
} as const;
export type CheckGroup = keyof typeof CHECK_GROUPS;

export interface Check {
  group: CheckGroup;
  name: string;
  status: CheckStatus;
  detail: string;
  /** What to do about a warning or a failure. */
  fix?: string;
  /** A failure's exit class (src/errors.ts). */
  exitCode?: ExitCode;
}

export const ok = (group: CheckGroup, name: string, detail: string): Check => ({ group, name, status: 'ok', detail });
export const warn = (group: CheckGroup, name: string, detail: string, fix?: string): Check => ({ group, name, status: 'warn', detail, ...(fix === undefined ? {} : { fix }) });
export const skip = (group: CheckGroup, name: string, detail: string): Check => ({ group, name, status: 'skip', detail });
export const fail = (group: CheckGroup, name: string, detail: string, fix: string, exitCode: ExitCode): Check => ({ group, name, status: 'fail', detail, fix, exitCode });

/** The exit code of a checklist: that of its first failure, in the order shown; 0 when none failed. */
export function exitCodeOf(checks: readonly Check[]): number {
  return checks.find((check) => check.status === 'fail')?.exitCode ?? 0;
}
