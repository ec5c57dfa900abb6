import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { buildOptions, checkAscii } from '../../bin/build.js';

/**
 * Start-up stays fast only while the command tree loads nothing heavy: every command's module,
 * and with it undici, zod, conf, string-width and the mock, must be reached only through a dynamic
 * `import()`. Checked on the bundle `npm run build` makes (the same options, not written).
 */
describe('start-up imports', () => {
  const bundle = async () => {
    const result = await build({ ...buildOptions, outfile: '/virtual-out/cli.cjs', write: false, metafile: true, logLevel: 'silent' });
    return result.metafile!;
  };

  it('the entry and what it statically imports load no heavy package and no command module', async () => {
    // One bundle file, in which esbuild initialises a module reached only through `import()` when
    // that import runs: what start-up runs is the entry and its static imports, in the source graph.
    const { inputs: graph } = await bundle();
    const inputs = new Set<string>();
    const externals = new Set<string>();
    const visit = (file: string) => {
      if (inputs.has(file)) return;
      inputs.add(file);
      for (const imported of graph[file]?.imports ?? []) {
        if (imported.kind !== 'import-statement' && imported.kind !== 'require-call') continue;
        if (imported.external) externals.add(imported.path);
        else visit(imported.path);
      }
    };
    visit('src/cli.ts');

    expect([...inputs]).toContain('src/commands/health/register.ts');
    // Help and completions name the contract's values and limits without loading zod.
    expect([...inputs]).toContain('src/contract/vocabulary.ts');
    const packages = new Set([...inputs].filter((input) => input.startsWith('node_modules/')).map((input) => input.split('/')[1]));
    expect([...packages]).toEqual(['commander']);
    expect([...externals].filter((path) => !path.startsWith('node:'))).toEqual([]);
    const heavyInputs = [...inputs].filter((input) => /src\/(mock|api\/(client|http)|config\/store|output\/table)|src\/commands\/[^/]+\/(?!register)/.test(input));
    expect(heavyInputs).toEqual([]);
    // The shared state store (and its database client, pg) loads only for a command that touches state.
    expect([...inputs].filter((input) => input.startsWith('src/state/'))).toEqual(['src/state/urlFlag.ts']);
  });

  it('has no import() of its own: it runs as a script compiled with a code cache (src/launch.ts)', async () => {
    const { outputs } = await bundle();
    const kinds = new Set(Object.values(outputs).flatMap((output) => output.imports.map((imported) => imported.kind)));
    expect([...kinds]).not.toContain('dynamic-import');
    expect([...kinds]).not.toContain('import-statement');
  });

  it('is ASCII only, which the launcher reads as one-byte text, and leaves form-data to `docs upload`', async () => {
    const result = await build({ ...buildOptions, outfile: '/virtual-out/cli.cjs', write: false, metafile: true, logLevel: 'silent' });
    const bundleText = result.outputFiles.find((file) => file.path.endsWith('cli.cjs'))!.text;
    expect(() => checkAscii(bundleText)).not.toThrow();
    expect(() => checkAscii(`${bundleText}// Wärting`)).toThrow(/not ASCII/);
    const inputs = Object.keys(result.metafile.inputs);
    expect(inputs.filter((input) => input.startsWith('node_modules/form-data/') || input.startsWith('node_modules/mime-db/'))).toEqual([]);
  });

  it('bundles zod without its locales, and gives undici a node:http2 that loads only when used', async () => {
    const outputs = Object.values((await bundle()).outputs);
    const inputs = outputs.flatMap((output) => Object.keys(output.inputs));
    expect(inputs.filter((input) => input.startsWith('node_modules/zod/'))).not.toEqual([]);
    // English only; the locales' index is an empty initialiser once the others are dropped.
    expect(inputs.filter((input) => /node_modules\/zod\/.*locales\/(?!en\.js|index\.js)/.test(input))).toEqual([]);
    expect(inputs).toContain('src/api/http2OnDemand.ts');
    expect(outputs.flatMap((output) => output.imports).filter((imported) => imported.path === 'node:http2')).toEqual([]);
  });

  it.each([
    ['node_modules/commander/lib/command.js', 'node:child_process', 'src/childProcessOnDemand.ts'],
    ['node_modules/undici/lib/core/util.js', 'node:http', 'src/api/httpForUndici.ts'],
    ['node_modules/undici/lib/dispatcher/client.js', 'node:http', 'src/api/httpForUndici.ts'],
  ])('gives %s a stand-in for %s', async (importer, module, standIn) => {
    const { inputs } = await bundle();
    const imports = inputs[importer]!.imports.map((imported) => imported.path);
    expect(imports).toContain(standIn);
    expect(imports).not.toContain(module);
  });

  it('loads jq (jq-wasm) and conf only when used: jq through import(), conf through the launcher', async () => {
    const { inputs } = await bundle();
    const importsOf = (path: string) => Object.values(inputs).flatMap((input) => input.imports).filter((imported) => imported.path === path);
    expect(importsOf('jq-wasm')).not.toEqual([]);
    expect(importsOf('jq-wasm').map((imported) => imported.kind)).toEqual(importsOf('jq-wasm').map(() => 'dynamic-import'));
    expect(importsOf('conf')).toEqual([]);
    expect(inputs['src/config/store.ts']?.imports.map((imported) => imported.path)).toContain('src/lib/importPackage.ts');
  });

  it('leaves the mock server to its own bundle, which `serve` loads from dist/mock/server.cjs', async () => {
    const { inputs } = await bundle();
    expect(Object.keys(inputs).filter((input) => input === 'src/mock/server.ts' || input.startsWith('node_modules/fastify/'))).toEqual([]);
    expect(inputs['src/commands/serve/serve.ts']?.imports).toContainEqual({ path: './mock/server.cjs', kind: 'dynamic-import', external: true });
  });
});
