import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { buildOptions } from '../../bin/build.js';

/**
 * Start-up stays fast only while the command tree loads nothing heavy: every command's module,
 * and with it undici, zod, conf, string-width and the mock, must be reached only through a dynamic
 * `import()`. Checked on the bundle `npm run build` makes (the same options, not written).
 */
describe('start-up imports', () => {
  const bundle = async () => {
    const result = await build({ ...buildOptions, outdir: '/virtual-out', write: false, metafile: true, logLevel: 'silent' });
    return result.metafile!.outputs;
  };

  it('the entry and what it statically imports load no heavy package and no command module', async () => {
    const outputs = await bundle();
    const entry = Object.keys(outputs).find((file) => outputs[file]?.entryPoint === 'src/cli.ts');
    expect(entry).toBeDefined();

    const staticFiles = new Set<string>();
    const externals = new Set<string>();
    const inputs = new Set<string>();
    const visit = (file: string) => {
      if (staticFiles.has(file)) return;
      staticFiles.add(file);
      for (const input of Object.keys(outputs[file]?.inputs ?? {})) inputs.add(input);
      for (const imported of outputs[file]?.imports ?? []) {
        if (imported.kind !== 'import-statement') continue;
        if (imported.external) externals.add(imported.path);
        else visit(imported.path);
      }
    };
    visit(entry!);

    expect([...inputs]).toContain('src/commands/health/register.ts');
    // Help and completions name the contract's values and limits without loading zod.
    expect([...inputs]).toContain('src/contract/vocabulary.ts');
    const packages = new Set([...inputs].filter((input) => input.startsWith('node_modules/')).map((input) => input.split('/')[1]));
    expect([...packages]).toEqual(['commander']);
    expect([...externals].filter((path) => !path.startsWith('node:'))).toEqual([]);
    const heavyInputs = [...inputs].filter((input) => /src\/(mock|api\/(client|http)|config\/store|output\/table)|src\/commands\/[^/]+\/(?!register)/.test(input));
    expect(heavyInputs).toEqual([]);
  });

  it('bundles zod without its locales, and gives undici a node:http2 that loads only when used', async () => {
    const outputs = Object.values(await bundle());
    const inputs = outputs.flatMap((output) => Object.keys(output.inputs));
    expect(inputs.filter((input) => input.startsWith('node_modules/zod/'))).not.toEqual([]);
    expect(inputs.filter((input) => /node_modules\/zod\/.*locales\/(?!en\.js)/.test(input))).toEqual([]);
    expect(inputs).toContain('src/api/http2OnDemand.ts');
    expect(outputs.flatMap((output) => output.imports).filter((imported) => imported.path === 'node:http2')).toEqual([]);
  });

  it('loads jq (jq-wasm) only through a dynamic import, for --jq', async () => {
    const imports = Object.values(await bundle()).flatMap((output) => output.imports).filter((imported) => imported.path === 'jq-wasm');
    expect(imports).not.toEqual([]);
    expect(imports.map((imported) => imported.kind)).toEqual(imports.map(() => 'dynamic-import'));
  });

  it('leaves the mock server to its own bundle, which `serve` loads from dist/mock/server.js', async () => {
    const outputs = await bundle();
    const inputs = Object.values(outputs).flatMap((output) => Object.keys(output.inputs));
    expect(inputs.filter((input) => input === 'src/mock/server.ts' || input.startsWith('node_modules/fastify/'))).toEqual([]);
    const serveChunk = Object.entries(outputs).find(([, output]) => Object.keys(output.inputs).includes('src/commands/serve/serve.ts'));
    expect(serveChunk?.[0]).toMatch(/virtual-out\/chunks\/serve-[^/]+\.js$/);
    expect(serveChunk?.[1].imports).toContainEqual(expect.objectContaining({ path: '../mock/server.js', external: true }));
  });
});
