#!/usr/bin/env node
// `npm run release`: builds, into release/ (ignored by git), what a user installs:
//   taxprep-<version>.tgz             the npm package (`npm pack`; package.json `files` says what is in it),
//                                     the mock bundled, depending only on what dist/ loads apart
//   taxprep-<version>-linux-x64       a single executable: Node with the CLI inside, needing no Node installed
//   taxprep-keyring.node              the credential store's native addon, to keep beside the executable
//   taxprep_<version>_amd64.deb       that executable as /usr/bin/taxprep, the addon as /usr/lib/taxprep/keyring.node,
//                                     with completions and man pages
//   SHA256SUMS                        for `sha256sum -c`
// The executable is Node's Single Executable Application, built by the pinned Node's own
// `--build-sea` (bin/pinnedNode.js: an exact release of a supported LTS line, never this machine's
// Node) from its own binary, so the blob always comes from the Node it is injected into. The blob
// holds a V8 start-up snapshot made by its main script, src/sea/main.ts with dist/cli.cjs inlined,
// and, as assets, every module the bundle loads apart, each bundled with its own dependencies, and
// jq-wasm's jq.wasm.
// .ci/release-check tests each artefact as a user would.
// A step that fails says so in one line on stderr (what, and why: no stack trace), and the release
// goes on with what does not need it: without the pinned Node (not fetched, or not the pinned
// file), release/ still gets the npm tarball and the addon, but neither the executable nor the
// .deb that holds it. SHA256SUMS then lists exactly the files built, a last line names those
// missing, and the exit code is 1. Exit 2: not on linux-x64.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';
import { buildOptions, checkAscii, mockBuildOptions } from './build.js';
import { commandFailure } from './commandFailure.js';
import { assertSupported, PINNED_NODE, PinnedNodeUnavailable, pinnedNodePath } from './pinnedNode.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const require = createRequire(import.meta.url);
const { name, version, description } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const out = join(root, 'release');
const node = process.execPath;

/**
 * What the executable's `require` reaches besides Node's own modules: every name bin/build.js
 * leaves out of dist/cli.cjs, as an asset bundled with its dependencies. Named by what the
 * bundle asks for, so src/sea/main.ts needs no table of its own.
 */
const MODULES_APART = {
  // ES module only; the bundle reads its `default` (src/config/store.ts).
  conf: { stdin: "export { default } from 'conf';" },
  'form-data': { stdin: "module.exports = require('form-data');" },
  // The same API, with jq.wasm read from the executable's assets.
  'jq-wasm': { entryPoints: ['src/sea/jq-wasm.ts'] },
  './mock/server.cjs': { entryPoints: mockBuildOptions.entryPoints },
};

/**
 * The credential store's binding is a native addon, which cannot run from the blob: the executable
 * opens it by path from beside itself, or from the .deb's /usr/lib/taxprep (src/config/credentialStore.ts).
 * The npm package's prebuilt linux-x64 (glibc) build of @napi-rs/keyring.
 */
const NATIVE_APART = '@napi-rs/keyring';
const KEYRING_ADDON = { beside: 'taxprep-keyring.node', deb: 'usr/lib/taxprep/keyring.node' };
const keyringAddon = () => require.resolve('@napi-rs/keyring-linux-x64-gnu/keyring.linux-x64-gnu.node', { paths: [root] });

/**
 * dist/cli.cjs as the module `taxprep:cli.cjs` of the main script (src/sea/main.ts): a function
 * taking what the launcher hands the bundle (src/launch.ts, runCommonJs). Code of the main script,
 * not a string run by node:vm, so that the snapshot holds the bundle's text once, as the main
 * script's source, instead of three times (the literal, the string and the script made of it).
 */
const inlineCliBundle = {
  name: 'inline-cli-bundle',
  setup(builder) {
    builder.onResolve({ filter: /^taxprep:cli\.cjs$/ }, () => ({ path: join(root, 'dist', 'cli.cjs'), namespace: 'cli-bundle' }));
    builder.onLoad({ filter: /.*/, namespace: 'cli-bundle' }, (args) => ({
      contents: `module.exports = function (exports, require, module, __filename, __dirname, __taxprepImportPackage) {${readFileSync(args.path, 'latin1')}\n};`,
      loader: 'js',
    }));
  },
};

/** Runs a command; when it fails, an error naming it and the first line of its complaint (run it alone for the rest). */
function run(command, args, options = {}) {
  try {
    return execFileSync(command, args, { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], ...options });
  } catch (error) {
    throw new Error(`${command} ${args.join(' ')} failed: ${commandFailure(error)}`);
  }
}

/** A bundle of the executable, with every dependency inside: there, only Node's own modules are on disk. */
async function bundle(options, outfile) {
  const { stdin, ...rest } = options;
  await build({
    absWorkingDir: root,
    bundle: true,
    platform: 'node',
    target: `node${PINNED_NODE.version}`,
    format: 'cjs',
    // Each runs as a script (the snapshot's main script, a module apart by node:vm), where Node offers no import().
    supported: { 'dynamic-import': false },
    minifyWhitespace: true,
    minifySyntax: true,
    legalComments: 'none',
    charset: 'ascii',
    logLevel: 'warning',
    outfile,
    ...(stdin === undefined ? rest : { stdin: { contents: stdin, resolveDir: root, loader: 'js' } }),
  });
  checkAscii(readFileSync(outfile, 'latin1'));
}

/** Builds the single executable at `executable` from dist/ (built), using `work` for what goes into it. */
export async function singleExecutable(work, executable) {
  // First, as the step most likely to fail (a registry out of reach): nothing is bundled for nothing.
  assertSupported(PINNED_NODE);
  const pinnedNode = pinnedNodePath();
  const missing = [...buildOptions.external, './mock/server.cjs'].filter((name) => name !== NATIVE_APART && !(name in MODULES_APART));
  if (missing.length > 0) throw new Error(`bin/release.js: no asset for ${missing.join(', ')}, which dist/cli.cjs loads apart`);
  const assets = { 'jq.wasm': require.resolve('jq-wasm/jq.wasm', { paths: [root] }) };
  // The bundle's require of the addon stays a call (answered by src/sea/main.ts), never bundled.
  await bundle({ entryPoints: ['src/sea/main.ts'], plugins: [inlineCliBundle], external: [NATIVE_APART] }, join(work, 'main.cjs'));
  await Promise.all(
    Object.entries(MODULES_APART).map(([name, options], index) => {
      assets[name] = join(work, `module-${index}.cjs`);
      return bundle(options, assets[name]);
    }),
  );
  // Node's release binary carries its symbol table and debug information, of no use to a user:
  // stripped before the blob goes in (stripping after would drop it).
  const base = join(work, 'node');
  copyFileSync(pinnedNode, base);
  chmodSync(base, 0o755);
  run('strip', ['--strip-all', base]);
  const config = join(work, 'sea-config.json');
  // useSnapshot: the main script runs here, and the executable starts from the heap it left
  // (src/sea/main.ts). NODE_OPTIONS applies as to any Node (execArgvExtension's default).
  const seaConfig = { main: join(work, 'main.cjs'), executable: base, output: executable, disableExperimentalSEAWarning: true, useSnapshot: true, assets };
  writeFileSync(config, JSON.stringify(seaConfig, null, 2));
  run(pinnedNode, ['--build-sea', config]);
  chmodSync(executable, 0o755);
  checkStarts(executable);
}

/**
 * Runs the new executable once, in an empty environment, and fails the build loudly unless it
 * starts and reports the pinned Node: a blob Node would not run, or a base of the wrong Node,
 * must never reach release/.
 */
function checkStarts(executable) {
  let document;
  try {
    document = JSON.parse(execFileSync(executable, ['version', '--json'], { env: {}, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }));
  } catch (error) {
    throw new Error(`the single executable ${executable} does not start: ${error.stderr || error.message}`);
  }
  if (document.runtime !== 'single executable' || document.node !== `v${PINNED_NODE.version}`) {
    throw new Error(`the single executable ${executable} runs ${document.runtime} on Node ${document.node}, not a single executable on the pinned v${PINNED_NODE.version}`);
  }
}

/** Files the .deb installs, by their place on the target system. */
function debianFiles(executable) {
  const manPages = readdirSync(join(root, 'man')).filter((name) => name.endsWith('.1'));
  return [
    { path: 'usr/bin/taxprep', from: executable, mode: 0o755 },
    { path: KEYRING_ADDON.deb, from: keyringAddon() },
    // Where each shell looks for completions shipped by packages.
    { path: 'usr/share/bash-completion/completions/taxprep', from: join(root, 'completions', 'taxprep.bash') },
    { path: 'usr/share/zsh/vendor-completions/_taxprep', from: join(root, 'completions', '_taxprep') },
    { path: 'usr/share/fish/vendor_completions.d/taxprep.fish', from: join(root, 'completions', 'taxprep.fish') },
    ...manPages.map((name) => ({ path: `usr/share/man/man1/${name}.gz`, contents: gzipSync(readFileSync(join(root, 'man', name)), { level: 9 }) })),
  ];
}

function debianPackage(work, executable, deb) {
  const staging = join(work, 'deb');
  let installedBytes = 0;
  for (const file of debianFiles(executable)) {
    const target = join(staging, file.path);
    mkdirSync(join(target, '..'), { recursive: true, mode: 0o755 });
    if (file.from !== undefined) copyFileSync(file.from, target);
    else writeFileSync(target, file.contents);
    chmodSync(target, file.mode ?? 0o644);
    installedBytes += statSync(target).size;
  }
  mkdirSync(join(staging, 'DEBIAN'));
  const control = [
    'Package: taxprep',
    `Version: ${version}`,
    'Architecture: amd64',
    'Maintainer: taxprep maintainers <taxprep@localhost>',
    'Section: utils',
    'Priority: optional',
    // What Node's own binary links against.
    'Depends: libc6 (>= 2.28), libstdc++6, libgcc-s1',
    `Installed-Size: ${Math.ceil(installedBytes / 1024)}`,
    `Description: ${description.split(',')[0]}`,
    ` A single executable with Node ${PINNED_NODE.version} inside: no Node installation is needed.`,
    '',
  ].join('\n');
  writeFileSync(join(staging, 'DEBIAN', 'control'), control);
  // gzip: xz takes about a minute for Node's 100 MB on two cores and saves a few MB.
  run('dpkg-deb', ['--root-owner-group', '-Zgzip', '-z6', '--build', staging, deb]);
}

/**
 * The npm package, packed from a copy of what `npm pack` would take, made to depend on only what
 * dist/ loads apart (bin/build.js's `external`: conf, jq-wasm, form-data, the keyring addon): the
 * mock, which dist/ loads from its own file with its packages outside, is bundled whole as in the
 * single executable. A global install ignores the lock file and `overrides`, so every other range
 * would resolve afresh on the user's machine (fastify's light-my-request to a release whose cookie
 * needs Node 22, under our floor of 20.19); and the package.json has no development scripts
 * (`prepare` builds from sources the package does not hold; npm 11 warns of it on every install).
 */
async function npmPackage(work) {
  const stage = join(work, 'npm-package');
  const [packed] = JSON.parse(run('npm', ['pack', '--dry-run', '--ignore-scripts', '--json']));
  for (const { path } of packed.files) {
    mkdirSync(dirname(join(stage, path)), { recursive: true });
    copyFileSync(join(root, path), join(stage, path));
  }
  await bundle({ entryPoints: mockBuildOptions.entryPoints }, join(stage, mockBuildOptions.outfile));
  const { scripts: _scripts, devDependencies: _devDependencies, overrides: _overrides, dependencies, ...manifest } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  const apart = Object.fromEntries(buildOptions.external.map((name) => [name, dependencies[name]]));
  writeFileSync(join(stage, 'package.json'), `${JSON.stringify({ ...manifest, dependencies: apart }, null, 2)}\n`);
  run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', out], { cwd: stage });
}

function checksums(files) {
  const lines = files.map((file) => `${createHash('sha256').update(readFileSync(join(out, file))).digest('hex')}  ${file}\n`);
  writeFileSync(join(out, 'SHA256SUMS'), lines.join(''));
}

/** One line for a failed step: what failed and why, with what to do when known; never a stack trace. */
function failureLine(error) {
  if (error instanceof PinnedNodeUnavailable) return `${error.message}; ${error.remedy}`;
  return String(error instanceof Error ? error.message : error).split('\n').filter((line) => line.trim() !== '').join(' ');
}

/** Everything in release/ that can be built, afresh; SHA256SUMS lists the files present. Returns the files missing. */
async function release() {
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out);
  const tarball = `${name.replace(/^@/, '').replace('/', '-')}-${version}.tgz`;
  const executable = `taxprep-${version}-linux-x64`;
  const deb = `taxprep_${version}_amd64.deb`;
  const missing = [];
  /**
   * Runs one step: when it fails, says why in one line, and `files` (its own and those that need
   * it) are missing, removed if the step left a part of one.
   */
  const step = async (files, action) => {
    try {
      await action();
      return true;
    } catch (error) {
      process.stderr.write(`release: ${failureLine(error)}\n`);
      for (const file of files) rmSync(join(out, file), { force: true });
      missing.push(...files);
      return false;
    }
  };
  const work = mkdtempSync(join(tmpdir(), 'taxprep-release-'));
  try {
    if (await step([tarball, executable, deb], () => run(node, ['bin/build.js', '--release']))) {
      // Packed from the build above: `prepare` would build again, with another build date.
      await step([tarball], () => npmPackage(work));
      if (await step([executable, deb], () => singleExecutable(work, join(out, executable)))) {
        await step([deb], () => debianPackage(work, join(out, executable), join(out, deb)));
      }
    }
    await step([KEYRING_ADDON.beside], () => copyFileSync(keyringAddon(), join(out, KEYRING_ADDON.beside)));
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  const present = readdirSync(out).sort();
  checksums(present);
  for (const file of [...present, 'SHA256SUMS']) process.stdout.write(`release/${file}  ${(statSync(join(out, file)).size / 1e6).toFixed(1)} MB\n`);
  return missing;
}

// Run, not imported (bench/startup.bench.js imports singleExecutable).
if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  if (process.platform !== 'linux' || process.arch !== 'x64') {
    process.stderr.write(`npm run release builds for linux-x64 from this Node's binary; this is ${process.platform}-${process.arch}.\n`);
    process.exitCode = 2;
  } else {
    try {
      const missing = await release();
      if (missing.length > 0) {
        const named = missing.map((file) => (file.endsWith('.deb') && missing.some((other) => other.endsWith('-linux-x64')) ? `${file} (it holds the executable)` : file));
        process.stderr.write(`release: incomplete, not built: ${named.join(', ')}; release/SHA256SUMS lists only the files built\n`);
        process.exitCode = 1;
      }
    } catch (error) {
      process.stderr.write(`release: ${failureLine(error)}\n`);
      process.exitCode = 1;
    }
  }
}
