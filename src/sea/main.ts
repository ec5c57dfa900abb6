import { isBuiltin } from 'node:module';
import { getRawAsset } from 'node:sea';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { startupSnapshot } from 'node:v8';
import loadCliBundle from 'taxprep:cli.cjs';
import { runCommonJs, runLoaded, setRunFlags, type CliModule } from '../launch';
import { openExecutableAddon } from '../config/credentialStore';

/**
 * The single executable's main script (built by bin/release.js), run once, when the executable is
 * built, to make its V8 start-up snapshot: it runs the CLI's bundle (dist/cli.cjs, inlined here)
 * and initialises the modules every API command loads on first use (`preloadModules`), and the
 * snapshot keeps that heap, compiled code included. A run of the executable starts from the
 * snapshot and only calls the CLI's `main`. The modules the bundle loads apart (the mock, conf,
 * form-data, jq-wasm, each bundled with its own dependencies) are assets of the executable, named
 * by what the bundle's `require` asks for, run when first asked for by the launcher's
 * `runCommonJs`: here `require` reaches only Node's built-in modules.
 */

/** An asset's text: the bundles are ASCII only (bin/release.js checks), so one-byte text, copied once. */
function assetText(name: string): string {
  // @types/node declares string | ArrayBuffer; Node returns the ArrayBuffer of the asset, not copied.
  return Buffer.from(getRawAsset(name) as ArrayBuffer).toString('latin1');
}

const loaded = new Map<string, unknown>();

function requireInExecutable(id: string): unknown {
  if (isBuiltin(id)) return require(id);
  // A native addon cannot run from the blob: the credential store's is a file beside the executable.
  if (id === '@napi-rs/keyring') return openExecutableAddon(process.execPath);
  if (!loaded.has(id)) {
    let source: string;
    try {
      source = assetText(id);
    } catch {
      throw Object.assign(new Error(`Cannot find module '${id}' in the single executable`), { code: 'MODULE_NOT_FOUND' });
    }
    loaded.set(id, runCommonJs(source, join(process.execPath, id), host).exports);
  }
  return loaded.get(id);
}

const host = {
  require: requireInExecutable,
  importPackage: async (name: string) => requireInExecutable(name),
};

type SnapshotCli = CliModule & { preloadModules(): Promise<void>; main(argv: string[], overrides: object): Promise<number> };

/**
 * What modules may read of the environment as they load: picocolors makes a default palette from
 * NO_COLOR, FORCE_COLOR and CI, which taxprep never uses (src/output/colors.ts makes its own).
 */
const HARMLESS_READS = new Set(['NO_COLOR', 'FORCE_COLOR', 'CI']);

/**
 * Runs `load` and fails if it read process.env beyond HARMLESS_READS: what a module reads of the
 * environment as it loads would be the build machine's, frozen into the snapshot.
 */
async function withoutEnvironment(load: () => Promise<void>): Promise<void> {
  const env = process.env;
  const reads = new Set<string>();
  process.env = new Proxy(env, {
    get: (target, name) => {
      if (!HARMLESS_READS.has(String(name))) reads.add(String(name));
      return Reflect.get(target, name);
    },
  });
  try {
    await load();
  } finally {
    process.env = env;
  }
  if (reads.size > 0) throw new Error(`the start-up snapshot cannot be made: modules read ${[...reads].join(', ')} of the build's environment as they load`);
}

/**
 * Runs help, which touches no file, network or terminal, into a sink: the functions it runs are
 * compiled now, and the snapshot keeps their code.
 */
async function warmUp(): Promise<void> {
  const sink = () => new Writable({ write: (_chunk, _encoding, done) => done() });
  for (const argv of [['--help'], ['accounts', 'get', '--help']]) {
    const io = { stdout: sink(), stderr: sink(), stdoutIsTTY: false, stderrIsTTY: false, columns: 80 };
    const code = await cli.main(argv, { io, env: {} });
    if (code !== 0) throw new Error(`the start-up snapshot cannot be made: taxprep ${argv.join(' ')} ended with ${code} while warming up`);
  }
}

if (!startupSnapshot.isBuildingSnapshot()) throw new Error('src/sea/main.ts is the main script of a start-up snapshot (bin/release.js, useSnapshot)');
const cliModule = { exports: {} };
loadCliBundle(cliModule.exports, host.require, cliModule, 'cli.cjs', '.', host.importPackage);
const cli = cliModule.exports as SnapshotCli;
startupSnapshot.setDeserializeMainFunction(() => {
  const argv = process.argv.slice(2);
  setRunFlags(argv);
  void runLoaded(cli, argv);
});
// The snapshot is made once the event loop is empty, so with those modules loaded and help run; a
// module that failed to load or read the environment fails the build (bin/release.js), as does
// anything V8 cannot keep in a snapshot (node:http's parsers).
withoutEnvironment(() => cli.preloadModules())
  .then(warmUp)
  .catch((error: unknown) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  });
