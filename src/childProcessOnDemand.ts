import type * as ChildProcess from 'node:child_process';

/**
 * What the bundle gives commander in place of `node:child_process` (see bin/build.js). commander
 * loads it when it loads, to run executable subcommands, which taxprep has none of; loading it
 * (with `node:dgram` and the rest it brings) took about 6 ms of every start-up. The real module
 * is loaded only if `spawn` is ever called.
 */
export const spawn = ((...args: Parameters<typeof ChildProcess.spawn>) =>
  process.getBuiltinModule('node:child_process').spawn(...args)) as typeof ChildProcess.spawn;
