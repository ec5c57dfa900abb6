import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';

/**
 * Start-up stays fast only while the command tree imports nothing heavy: every command's module,
 * and with it undici, zod, conf, cli-table3 and the mock, must be reached only through a dynamic
 * `import()`. Checked on the bundle esbuild makes (the same options as `npm run build`).
 */
describe('start-up imports', () => {
  it('the entry and what it statically imports load no heavy package and no command module', async () => {
    const result = await build({
      entryPoints: [new URL('../../src/cli.ts', import.meta.url).pathname],
      bundle: true,
      splitting: true,
      format: 'esm',
      platform: 'node',
      target: 'node20',
      packages: 'external',
      outdir: '/virtual-out',
      write: false,
      metafile: true,
      logLevel: 'silent',
    });
    const outputs = result.metafile.outputs;
    const entry = Object.keys(outputs).find((file) => outputs[file]?.entryPoint?.endsWith('src/cli.ts'));
    expect(entry).toBeDefined();

    const staticFiles = new Set<string>();
    const packages = new Set<string>();
    const inputs = new Set<string>();
    const visit = (file: string) => {
      if (staticFiles.has(file)) return;
      staticFiles.add(file);
      for (const input of Object.keys(outputs[file]?.inputs ?? {})) inputs.add(input);
      for (const imported of outputs[file]?.imports ?? []) {
        if (imported.kind !== 'import-statement') continue;
        if (imported.external) packages.add(imported.path);
        else visit(imported.path);
      }
    };
    visit(entry!);

    expect([...inputs]).toContain('src/commands/health/register.ts');
    expect([...packages].sort()).toEqual(['commander']);
    const heavyInputs = [...inputs].filter((input) => /src\/(mock|api\/(client|http)|config\/store|output\/table)|src\/commands\/[^/]+\/(?!register)/.test(input));
    expect(heavyInputs).toEqual([]);
  });
});
