import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { mkdtempSync, readdirSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { bundleFile, cachePathOf, commandKey, loadCli, runCommonJs } from '../../src/launch';

const LAUNCHER = pathToFileURL(join(import.meta.dirname, '..', '..', 'dist', 'launch.cjs')).href;

/** A stand-in for dist/cli.cjs: CommonJS that uses what the launcher hands it. */
const BUNDLE = `
const { join } = require('node:path');
exports.main = async (argv) => {
  const path = await __taxprepImportPackage('node:path');
  return argv.length + (path.join === join ? 100 : 0) + (__filename.endsWith('cli.cjs') ? 1000 : 0);
};
`;

function setUp(source = BUNDLE) {
  const directory = mkdtempSync(join(tmpdir(), 'taxprep-launch-'));
  const bundle = join(directory, 'cli.cjs');
  writeFileSync(bundle, source);
  return { bundle, env: { XDG_CACHE_HOME: join(directory, 'cache') } };
}

async function run(bundle: string, argv: string[], env: Record<string, string>) {
  const { cli, keepCompiledCode } = loadCli(bundleFile(bundle), argv, env);
  const exitCode = await cli.main(argv);
  await keepCompiledCode();
  return exitCode;
}

/**
 * The same, in a fresh process with the built launcher (`npm run build`): within one process V8
 * reuses what it compiled before and never reads the cache.
 */
function runInChild(bundle: string, argv: string[], env: Record<string, string>): number {
  const script = `import { bundleFile, loadCli } from ${JSON.stringify(LAUNCHER)};
const argv = ${JSON.stringify(argv)};
const { cli, keepCompiledCode } = loadCli(bundleFile(${JSON.stringify(bundle)}), argv, process.env);
const exitCode = await cli.main(argv);
await keepCompiledCode();
process.stdout.write(String(exitCode));`;
  return Number(execFileSync(process.execPath, ['--input-type=module', '-e', script], { env: { ...process.env, ...env }, encoding: 'utf8' }));
}

describe('commandKey: one compiled-code cache per command', () => {
  it.each([
    [['accounts', 'get', '1001'], 'accounts-get'],
    [['login-link', 'create', '--purpose', 'x'], 'login-link-create'],
    [['health'], 'health'],
    [['docs', 'list', 'extra', 'words'], 'docs-list'],
    [['--help'], 'taxprep'],
    [['--json', 'accounts', 'get'], 'taxprep'],
    [['api', 'GET', 'accounts/1'], 'api'],
    [[], 'taxprep'],
  ])('%j -> %s', (argv, key) => {
    expect(commandKey(argv)).toBe(key);
  });
});

describe('loadCli: the CLI bundle with a V8 code cache', () => {
  it('runs the bundle with require, its file name and the launcher import, and leaves a private cache for the command', async () => {
    const { bundle, env } = setUp();
    expect(await run(bundle, ['accounts', 'get', '1001'], env)).toBe(1103);
    const cachePath = cachePathOf(bundleFile(bundle), ['accounts', 'get'], env)!;
    expect(cachePath.startsWith(join(env.XDG_CACHE_HOME, 'taxprep', 'compiled'))).toBe(true);
    expect(cachePath.endsWith('accounts-get.v8')).toBe(true);
    expect(statSync(cachePath).mode & 0o777).toBe(0o600);
    expect(statSync(dirname(cachePath)).mode & 0o777).toBe(0o700);
  });

  it('uses the cache the next time instead of writing it again', () => {
    const { bundle, env } = setUp();
    expect(runInChild(bundle, ['health'], env)).toBe(1101);
    const cachePath = cachePathOf(bundleFile(bundle), ['health'], env)!;
    utimesSync(cachePath, new Date(0), new Date(0));
    expect(runInChild(bundle, ['health'], env)).toBe(1101);
    expect(statSync(cachePath).mtimeMs).toBe(0);
  });

  it('replaces a cache V8 refuses (damaged), and still runs', () => {
    const { bundle, env } = setUp();
    expect(runInChild(bundle, ['health'], env)).toBe(1101);
    const cachePath = cachePathOf(bundleFile(bundle), ['health'], env)!;
    const good = readFileSync(cachePath);
    writeFileSync(cachePath, 'not compiled code');
    expect(runInChild(bundle, ['health'], env)).toBe(1101);
    // Compiled code again (V8 stamps each cache, so the bytes differ), not the damaged file.
    expect(readFileSync(cachePath).length).toBe(good.length);
  });

  it('a new build of the bundle gets a cache of its own; the caches of the last four builds are kept', async () => {
    const { bundle, env } = setUp();
    const buildDirectories: string[] = [];
    for (let build = 1; build <= 5; build += 1) {
      writeFileSync(bundle, `${BUNDLE}\n// build ${'x'.repeat(build)}\n`);
      expect(await run(bundle, ['health'], env)).toBe(1101);
      const directory = dirname(cachePathOf(bundleFile(bundle), ['health'], env)!);
      expect(buildDirectories).not.toContain(directory);
      buildDirectories.push(directory);
      // Ordered by when they were last written, which the file system may not tell apart within a test.
      utimesSync(directory, new Date(build * 1000), new Date(build * 1000));
    }
    const kept = readdirSync(dirname(buildDirectories[0]!)).map((entry) => join(dirname(buildDirectories[0]!), entry));
    expect(kept.sort()).toEqual(buildDirectories.slice(1).sort());
  });

  it('runs without a cache where none can be written, and writes none when NODE_DISABLE_COMPILE_CACHE is set', async () => {
    const { bundle, env } = setUp();
    writeFileSync(env.XDG_CACHE_HOME, 'a file where the cache directory would be');
    expect(await run(bundle, ['health'], env)).toBe(1101);

    const disabled = setUp();
    const disabledEnv = { ...disabled.env, NODE_DISABLE_COMPILE_CACHE: '1' };
    expect(cachePathOf(bundleFile(disabled.bundle), ['health'], disabledEnv)).toBeUndefined();
    expect(await run(disabled.bundle, ['health'], disabledEnv)).toBe(1101);
    expect(() => statSync(disabled.env.XDG_CACHE_HOME)).toThrow();
  });
});

describe('runCommonJs: one loader for the bundle and, in the single executable, the modules it loads apart', () => {
  it('gives the module the host\'s require and import, as src/sea/main.ts does with the executable\'s assets', async () => {
    const nodeRequire = createRequire(import.meta.url);
    const assets: Record<string, string> = { conf: "exports.default = class Conf {}; exports.base = require('node:path').basename(__filename);" };
    const loaded = new Map<string, unknown>();
    const host = {
      require: (id: string): unknown => {
        if (id.startsWith('node:')) return nodeRequire(id);
        if (!loaded.has(id)) loaded.set(id, runCommonJs(assets[id]!, `/usr/bin/taxprep/${id}`, host).exports);
        return loaded.get(id);
      },
      importPackage: async (name: string) => host.require(name),
    };
    const bundle = "exports.main = async () => [(await __taxprepImportPackage('conf')).base, require('conf').default.name, __dirname].join(' ');";
    const { exports } = runCommonJs(bundle, '/usr/bin/taxprep/cli.cjs', host);
    expect(await (exports as { main(): Promise<string> }).main()).toBe('conf Conf /usr/bin/taxprep');
    expect(loaded.size).toBe(1);
  });
});
