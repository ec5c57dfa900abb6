import { describe, expect, it } from 'vitest';
import { makeHome, runMain } from '../helpers/cli';

/**
 * The run flags every batch command shares (src/batch/flags.ts, options.ts): help, completion and
 * range errors. A file of its own: the flags are declared when the commands are, at import, and the
 * mutation tests credit a module's import to the first test of a file that loads it: so one test
 * checks all that the declarations carry (help, completion, the field a value is checked as).
 */

const home = makeHome();
const env = { NO_COLOR: '1' };

describe('the run flags every batch command shares', () => {
  it('are explained in help with their ranges and defaults, complete --ledger with file names, and refuse a value out of range', async () => {
    const help = await runMain(['docs', 'sync', '--help'], { env, home });
    expect(help.stdout).toContain(
      '  --concurrency <n>      requests at a time in a batch, 1-16 (default 4)\n' +
        '  --ledger <path>        ledger file (default: documents.ndjson in the user data\n' +
        '                         directory)\n' +
        '  --lock-wait <seconds>  how long to wait for another run holding the ledger,\n' +
        '                         0-3600 (default 5)\n',
    );

    // --ledger completes with file names in the shells.
    const fish = await runMain(['completion', 'fish'], { env, home });
    expect(fish.stdout).toContain("complete -c taxprep -n '__taxprep_at taxprep/docs/sync' -l ledger -r -F -d 'ledger file (default: documents.ndjson in the user data directory)'\n");

    // A value out of range is refused, naming the flag and its rule (the flag's field carries it to the check).
    const wait = await runMain(['docs', 'sync', home, '--lock-wait', '3601'], { env, home });
    expect([wait.exitCode, wait.stderr.split('\n')[0]]).toEqual([2, 'error: --lock-wait must be a whole number of seconds from 0 to 3600']);
    const concurrency = await runMain(['docs', 'sync', home, '--concurrency', '17'], { env, home });
    expect([concurrency.exitCode, concurrency.stderr.split('\n')[0]]).toEqual([2, 'error: --concurrency must be an integer from 1 to 16']);
  });
});
