#!/usr/bin/env node
// Builds dist/ from src/ (`npm run build`, run by `npm install` through `prepare`): the CLI as one
// CommonJS bundle (dist/cli.cjs) that the launcher (dist/launch.cjs, from src/launch.ts) runs with a
// V8 code cache, and the mock as a bundle of its own. Each command's modules are still initialised
// only when that command runs (esbuild turns their dynamic imports into lazy initialisers).
// test/cli/startup.test.ts builds with the same options to check what start-up loads.
import { execFileSync } from 'node:child_process';
import { readFileSync, realpathSync, rmSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';

const root = fileURLToPath(new URL('..', import.meta.url));

/**
 * Stand-ins for Node modules, given to the importers named: undici's HTTP/2 client gets
 * src/api/http2OnDemand.ts for `node:http2`, commander src/childProcessOnDemand.ts for
 * `node:child_process` (both load the real module only when used), and undici's core and client
 * src/api/httpForUndici.ts for `node:http`, of which they read two values.
 */
const ON_DEMAND = [
  { module: 'node:http2', importer: /[\\/]undici[\\/]lib[\\/]dispatcher[\\/]client-h2\.js$/, standIn: 'src/api/http2OnDemand.ts' },
  { module: 'node:child_process', importer: /[\\/]commander[\\/]lib[\\/]command\.js$/, standIn: 'src/childProcessOnDemand.ts' },
  { module: 'node:http', importer: /[\\/]undici[\\/]lib[\\/](core[\\/]util|dispatcher[\\/]client)\.js$/, standIn: 'src/api/httpForUndici.ts' },
];
const modulesOnDemand = {
  name: 'modules-on-demand',
  setup(builder) {
    builder.onResolve({ filter: /^node:(http2|child_process|http)$/ }, (args) => {
      const entry = ON_DEMAND.find(({ module, importer }) => module === args.path && importer.test(args.importer));
      return entry === undefined ? undefined : { path: `${root}${entry.standIn}` };
    });
  },
};

/**
 * The mock is a bundle of its own (dist/mock/server.cjs), loaded by `taxprep serve` at run time,
 * with its dependencies left to Node: bundled with the CLI (zod in particular), the same server
 * answered about an eighth fewer requests a second (bench/throughput.bench.js). CommonJS, so that
 * the CLI's bundle can `require` it.
 */
const MOCK_SERVER_SOURCE = 'src/mock/server.ts';
const mockServerApart = {
  name: 'mock-server-apart',
  setup(builder) {
    builder.onResolve({ filter: /[\\/]mock[\\/]server$/ }, (args) =>
      /[\\/]commands[\\/]serve[\\/]serve\.ts$/.test(args.importer) ? { path: './mock/server.cjs', external: true } : undefined,
    );
  },
};

/**
 * Packages that are only ES modules (conf) are loaded with the launcher's `import()`, handed to
 * the bundle by src/launch.ts: a script compiled with a code cache has none of its own on Node 20.
 */
const launcherImport = {
  name: 'launcher-import',
  setup(builder) {
    builder.onLoad({ filter: /[\\/]src[\\/]lib[\\/]importPackage\.ts$/ }, () => ({
      contents: 'export const importPackage = (name) => __taxprepImportPackage(name);',
      loader: 'js',
    }));
  },
};

/** @type {import('esbuild').BuildOptions} */
const common = { absWorkingDir: root, bundle: true, format: 'esm', platform: 'node', target: 'node20', logLevel: 'warning' };

/** @type {import('esbuild').BuildOptions} */
export const mockBuildOptions = { ...common, format: 'cjs', entryPoints: [MOCK_SERVER_SOURCE], outfile: 'dist/mock/server.cjs', packages: 'external' };

/**
 * The launcher: loads dist/cli.cjs with its code cache. CommonJS, required by bin/taxprep.cjs (an
 * ES module would start Node's ES module loader); what writes the cache is initialised only then.
 */
const launchBuildOptions = { ...common, format: 'cjs', entryPoints: ['src/launch.ts'], outfile: 'dist/launch.cjs' };

/** @type {import('esbuild').BuildOptions} */
export const buildOptions = {
  ...common,
  entryPoints: ['src/cli.ts'],
  outfile: 'dist/cli.cjs',
  // One file: with a code cache, what costs is running code, not its size; split into ES modules
  // it could have no code cache at all on Node 20.
  format: 'cjs',
  // `import()` becomes `require`: the bundle runs where it has no `import()` (src/launch.ts).
  supported: { 'dynamic-import': false },
  // Dependencies are bundled: resolving and reading hundreds of small files is most of what Node
  // does before a command can run. Left out: conf, whose dependencies load their own files at run
  // time, jq-wasm, which reads its jq.wasm from beside its own module (loaded only for --jq),
  // form-data (with its 200 KB table of media types, loaded only by `docs upload`), and the mock
  // (its own bundle, above). The single executable holds each as an asset (bin/release.js).
  // @napi-rs/keyring is a native addon (the credential store), loaded only by a command that reads
  // or writes a stored secret; the single executable opens it from beside itself.
  external: ['conf', 'jq-wasm', 'form-data', '@napi-rs/keyring'],
  // Every run reads the whole file: without comments and blank space it is a third smaller, and in
  // ASCII only (licence comments go to dist/cli.cjs.LEGAL.txt) the launcher reads it as one-byte
  // text, about three times faster than decoding UTF-8. Names are kept, for --verbose stack traces.
  minifyWhitespace: true,
  minifySyntax: true,
  legalComments: 'external',
  charset: 'ascii',
  plugins: [modulesOnDemand, mockServerApart, launcherImport],
};

/** The launcher reads dist/cli.cjs as Latin-1 (src/launch.ts): anything but ASCII would be misread. */
export function checkAscii(text) {
  const at = text.search(/[^\x00-\x7f]/);
  if (at !== -1) throw new Error(`dist/cli.cjs holds a character that is not ASCII at offset ${at}: ${JSON.stringify(text.slice(Math.max(0, at - 40), at + 40))}`);
}

/**
 * What `taxprep version` reports of the build: the commit of a clone (its short hash), `unknown`
 * outside git (a source archive, no git installed), and the build time (SOURCE_DATE_EPOCH when
 * set, for a build that can be repeated byte for byte). Never fails the build.
 */
export function buildStamp(directory = root, env = process.env) {
  let commit = 'unknown';
  try {
    const git = (...args) => execFileSync('git', ['-C', directory, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], env }).trim();
    // Only the clone's own commit: a copy of the sources inside another repository is not it.
    if (realpathSync(git('rev-parse', '--show-toplevel')) === realpathSync(directory)) commit = git('rev-parse', '--short=12', 'HEAD');
  } catch {
    commit = 'unknown';
  }
  const epoch = Number(env.SOURCE_DATE_EPOCH);
  const date = Number.isInteger(epoch) && env.SOURCE_DATE_EPOCH !== '' ? new Date(epoch * 1000) : new Date();
  return { commit, date: date.toISOString().replace(/\.\d{3}Z$/, 'Z') };
}

/** The values src/api/version.ts reads, stamped into the bundle; `release` marks what `npm run release` ships. */
export function stampDefines(version, stamp, release = false) {
  return { TAXPREP_VERSION: JSON.stringify(version), TAXPREP_COMMIT: JSON.stringify(stamp.commit), TAXPREP_BUILD_DATE: JSON.stringify(stamp.date), TAXPREP_RELEASE: JSON.stringify(release) };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const { version } = (await import('../package.json', { with: { type: 'json' } })).default;
  // A clean directory: nothing of an earlier build's layout stays behind.
  rmSync(`${root}dist`, { recursive: true, force: true });
  await Promise.all([build({ ...buildOptions, define: stampDefines(version, buildStamp(), process.argv.includes('--release')) }), build(launchBuildOptions), build(mockBuildOptions)]);
  checkAscii(readFileSync(`${root}dist/cli.cjs`, 'latin1'));
}
