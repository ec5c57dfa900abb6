/**
 * A process that opens the mock's store on a data directory once loaded it says `ready`; when its
 * parent says go (a line on stdin), it reports `running` or `refused <error>`, and closes the store when stdin ends. Bundled by
 * test/mock/dataDirLock.test.ts, so that two real processes race for one directory.
 */
import { parseFixture } from '../../../src/mock/fixture';
import { openStore } from '../../../src/mock/store';

// No documents: the winner's start-up writes (each flushed to the disk) stay few and the race stays short.
const FIXTURE = parseFixture({ partners: [{ id: 1, name: 'Solo', api_keys: [{ key: 'tpk_testKeySolo00000000000001', label: 'main' }] }] });

const dataDir = process.argv[2]!;
process.stdout.write('ready\n');
process.stdin.once('data', () => {
  openStore({ fixture: FIXTURE, dataDir }).then(
    (store) => {
      process.stdout.write('running\n');
      process.stdin.on('end', () => void store.close());
      process.stdin.resume();
    },
    (error: unknown) => {
      process.stdout.write(`refused ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}\n`);
      process.exitCode = 3;
      process.stdin.destroy();
    },
  );
});
