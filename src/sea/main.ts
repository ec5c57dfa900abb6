import { isBuiltin } from 'node:module';
import { getRawAsset } from 'node:sea';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { runCli, runCommonJs, type CliBundle } from '../launch';

/**
 * The single executable's main script (built by bin/release.js): the CLI's bundle and the modules
 * it loads apart (the mock, conf, form-data, jq-wasm, each bundled with its own dependencies) are
 * assets of the executable, named by what the bundle's `require` asks for. Here `require` reaches
 * only Node's built-in modules, so every other name is run from its asset, by the launcher's
 * `runCommonJs` that also runs the CLI's bundle.
 */

/** An asset's text: the bundles are ASCII only (bin/release.js checks), so one-byte text, copied once. */
function assetText(name: string): string {
  // @types/node declares string | ArrayBuffer; Node returns the ArrayBuffer of the asset, not copied.
  return Buffer.from(getRawAsset(name) as ArrayBuffer).toString('latin1');
}

const loaded = new Map<string, unknown>();

function requireInExecutable(id: string): unknown {
  if (isBuiltin(id)) return require(id);
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

// The executable is the build: its size and modification time name it, as dist/cli.cjs's do.
const { size, mtimeMs } = statSync(process.execPath);
const bundle: CliBundle = {
  filename: join(process.execPath, 'cli.cjs'),
  build: `sea-${size}-${Math.trunc(mtimeMs)}`,
  source: () => assetText('cli.cjs'),
  ...host,
};

void runCli(bundle, process.argv.slice(2), process.env);
