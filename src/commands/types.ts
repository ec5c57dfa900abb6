import type { Context } from '../types';

/** What commander hands over: positional arguments in order, and the command's own flags. */
export interface RawInvocation {
  args: unknown[];
  flags: Record<string, unknown>;
}

/**
 * One command's module (`src/commands/<noun>/<verb>.ts`), imported only when the command runs.
 * `parseOptions` is pure (flag and argument rules, `UsageError` on bad input) so that it is tested
 * as a table of argv -> options; `run` only reads options and the context, and returns the exit
 * code (0 when omitted). Failures are thrown as `CliError`s and mapped to exit codes in `main`.
 */
export interface CommandModule<Options> {
  parseOptions(raw: RawInvocation): Options;
  run(ctx: Context, options: Options): Promise<number | void>;
}

/**
 * How a `register.ts` hands an invocation to whoever runs it: `main` builds a context and runs the
 * module; flag-parsing tests capture the options instead.
 */
export type Dispatch = (load: () => Promise<CommandModule<unknown>>, raw: RawInvocation) => Promise<void>;
