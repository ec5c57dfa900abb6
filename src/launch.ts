import { mkdirSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import nodeModule, { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { Script } from 'node:vm';
import { appDirectory } from './lib/paths';

type Env = Record<string, string | undefined>;

/** What the CLI's bundle (dist/cli.cjs, made from src/cli.ts) gives the launcher. */
export interface CliModule {
  main(argv: string[]): Promise<number>;
}

/**
 * The CLI's bundle and what its `require` and `import` reach: a file with Node's module loader
 * beside it (an npm install, `bundleFile`), or an asset of the single executable with the other
 * assets (src/sea/main.ts). The launcher runs either the same way.
 */
export interface CliBundle {
  /** Given to the bundle as __filename, and shown in stack traces. */
  filename: string;
  /** Names this build of the bundle, for its compiled-code cache: changes with every build. */
  build: string;
  /** The bundle's text: ASCII only (bin/build.js checks). */
  source(): string;
  require(id: string): unknown;
  /** For the packages that are only ES modules (src/lib/importPackage.ts). */
  importPackage(name: string): Promise<unknown>;
}

/**
 * dist/cli.cjs of an npm install or a clone. V8 checks the Node version and the source's length,
 * not its content, so the build is named by the file's size and modification time.
 */
export function bundleFile(path: string): CliBundle {
  const { size, mtimeMs } = statSync(path);
  const require = createRequire(path);
  return {
    filename: path,
    build: `${size}-${Math.trunc(mtimeMs)}`,
    // Read as one-byte text: no UTF-8 to decode.
    source: () => readFileSync(path, 'latin1'),
    require,
    importPackage: (name) => import(name),
  };
}

/**
 * Runs CommonJS `source` as a script compiled with V8's code cache `cachedData` (when given and
 * accepted), with `require` and the launcher's `import` for packages; returns the script (for its
 * cache) and the module's exports. The CLI's bundle and, in the single executable, the modules it
 * loads apart (src/sea/main.ts) are all run by this.
 */
export function runCommonJs(source: string, filename: string, host: Pick<CliBundle, 'require' | 'importPackage'>, cachedData?: Buffer): { script: Script; exports: unknown } {
  // The wrapper is on the source's first line, so its line numbers hold.
  const script = new Script(`(function (exports, require, module, __filename, __dirname, __taxprepImportPackage) {${source}\n})`, { filename, cachedData });
  const module = { exports: {} as unknown };
  script.runInThisContext()(module.exports, host.require, module, filename, dirname(filename), host.importPackage);
  return { script, exports: module.exports };
}

export interface LoadedCli {
  cli: CliModule;
  /** Stores the compiled code for the next run of this command when there was none to use; never fails. */
  keepCompiledCode(): Promise<void>;
}

/** Different commands leave a cache each; beyond this many, new ones are not written. */
const MAX_CACHED_COMMANDS = 64;
/** Builds of the bundle whose caches are kept. */
const KEPT_BUILDS = 4;
const COMMAND_WORD = /^[a-z][a-z-]{0,31}$/;

/**
 * The cache a run uses: one per command (`accounts-get`), since V8 stores the functions a run
 * compiled and each command runs different ones; the words before the first that is not a
 * command-like word (a flag, an id), at most two.
 */
export function commandKey(argv: readonly string[]): string {
  const words: string[] = [];
  for (const word of argv) {
    if (words.length === 2 || !COMMAND_WORD.test(word)) break;
    words.push(word);
  }
  return words.length === 0 ? 'taxprep' : words.join('-');
}

/**
 * Where compiled code for this build of the bundle, this Node and this command is kept, or
 * undefined when the user turned caching off (NODE_DISABLE_COMPILE_CACHE, as for Node's own). The
 * directory names the build: a new build never meets an old build's code.
 */
export function cachePathOf(bundle: Pick<CliBundle, 'build'>, argv: readonly string[], env: Env): string | undefined {
  if (env.NODE_DISABLE_COMPILE_CACHE) return undefined;
  return join(appDirectory('cache', env), 'compiled', `${process.version}-${process.arch}-${bundle.build}`, `${commandKey(argv)}.v8`);
}

function readCache(path: string | undefined): Buffer | undefined {
  if (path === undefined) return undefined;
  try {
    return readFileSync(path);
  } catch {
    return undefined;
  }
}

/**
 * V8's flags for a run of `argv`, set before any of the CLI's code is compiled or run (also by the
 * single executable, src/sea/main.ts, on its start-up snapshot).
 */
export function setRunFlags(argv: readonly string[]): void {
  // undici parses HTTP with a WebAssembly module; V8's baseline compiler alone starts it sooner
  // than waiting for the optimising tier, which a short-lived CLI never benefits from. Set before
  // compiling: V8 refuses a code cache made under other flags.
  setFlagsFromString('--liftoff-only');
  // Memory over speed for the commands, never for the mock: a server under load wants V8's
  // default heap (its throughput is measured in bench/throughput.bench.js).
  if (argv[0] !== 'serve') {
    // V8 grows its young generation up to 3x16 MB when many of the objects it allocates live on
    // (a sync planning 10,000 files holds each one); a CLI that finishes in seconds gains nothing
    // from the bigger nursery, and the peak RSS of such a run drops by a third (109 -> 75 MB).
    setFlagsFromString('--semi-space-growth-factor=1');
    // A batch holds a line of state per row while its garbage piles up in old space; V8's
    // size-favouring heap limits collect it sooner (an import of 10,000 rows: 103 -> 82 MB peak
    // RSS, no slower, start-up unchanged).
    setFlagsFromString('--optimize-for-size');
  }
}

/**
 * Loads the CLI bundle as a script compiled with V8's code cache: compiling the bundle's code is
 * the largest part of a command's start-up on Node 20, which has no `module.enableCompileCache`
 * (and Node 22's does not reach code compiled this way). A cache V8 rejects, or none, is
 * compiled afresh and written after the command.
 */
export function loadCli(bundle: CliBundle, argv: readonly string[], env: Env): LoadedCli {
  setRunFlags(argv);
  const cachePath = cachePathOf(bundle, argv, env);
  const cachedData = readCache(cachePath);
  // Node 22.1 and later also keep what their module loader compiles: what the bundle leaves to Node
  // (conf, jq-wasm, the mock and its dependencies). A no-op on Node 20; never throws.
  if (cachePath !== undefined) (nodeModule as { enableCompileCache?: (directory: string) => unknown }).enableCompileCache?.(join(appDirectory('cache', env), 'modules'));
  const { script, exports } = runCommonJs(bundle.source(), bundle.filename, bundle, cachedData);
  return {
    cli: exports as CliModule,
    async keepCompiledCode() {
      if (cachePath === undefined || (cachedData !== undefined && !script.cachedDataRejected)) return;
      try {
        const directory = dirname(cachePath);
        if (mkdirSync(directory, { recursive: true, mode: 0o700 }) !== undefined) removeOldBuilds(dirname(directory));
        if (readdirSync(directory).length >= MAX_CACHED_COMMANDS) return;
        const { writeFileAtomically } = await import('./lib/files');
        await writeFileAtomically(cachePath, script.createCachedData(), { durable: false });
      } catch {
        // A cache that cannot be written (a read-only home, a full disk) only makes the next run slower.
      }
    },
  };
}

/**
 * Keeps the directories of the few builds that last wrote a cache (two installs, or two Node
 * versions, may take turns) and removes older ones, which new builds have made useless.
 */
function removeOldBuilds(parent: string): void {
  const builds = readdirSync(parent)
    .map((entry) => ({ path: join(parent, entry), writtenMs: statSync(join(parent, entry)).mtimeMs }))
    .sort((a, b) => b.writtenMs - a.writtenMs);
  for (const build of builds.slice(KEPT_BUILDS)) rmSync(build.path, { recursive: true, force: true });
}

/** Resolves once everything written to `stream` so far has been handed to the OS. */
const flushed = (stream: NodeJS.WriteStream) => new Promise<void>((resolve) => stream.write('', () => resolve()));

/**
 * Runs one command of the CLI in `bundle` and exits with its code: what bin/taxprep.cjs and the
 * single executable (src/sea/main.ts) both do once they know where the bundle is.
 */
export async function runCli(bundle: CliBundle, argv: string[], env: Env): Promise<never> {
  const { cli, keepCompiledCode } = loadCli(bundle, argv, env);
  return runLoaded(cli, argv, keepCompiledCode);
}

/** Runs one command of a loaded CLI and exits with its code, once its output is out and `after` has run. */
export async function runLoaded(cli: CliModule, argv: string[], after: () => Promise<void> = async () => undefined): Promise<never> {
  // A failed stdout (a reader gone, a full disk) is reported by the CLI with its own exit code
  // (src/cli.ts, `main`); a failed stderr has nobody to tell. Either way a write failing after that,
  // here or in the CLI, must not become an uncaught exception and a stack trace.
  for (const stream of [process.stdout, process.stderr]) stream.on('error', () => undefined);
  const exitCode = await cli.main(argv);
  // Exit as soon as the output is out, instead of when the event loop drains: V8 may still be
  // compiling in the background and closed sockets linger for a moment, and a CLI gains nothing
  // from waiting for either.
  await Promise.all([flushed(process.stdout), flushed(process.stderr)]);
  await after();
  process.exit(exitCode);
}
