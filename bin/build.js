#!/usr/bin/env node
// Builds dist/ from src/ (`npm run build`, run by `npm install` through `prepare`): one ESM bundle
// split into chunks, so each command's code loads only when that command runs.
// test/cli/startup.test.ts builds with the same options to check what start-up loads.
import { rmSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';

const root = fileURLToPath(new URL('..', import.meta.url));

/** Gives undici's HTTP/2 client a stand-in that loads `node:http2` only when used (src/api/http2OnDemand.ts). */
const http2OnDemand = {
  name: 'http2-on-demand',
  setup(builder) {
    builder.onResolve({ filter: /^node:http2$/ }, (args) =>
      /[\\/]undici[\\/]lib[\\/]dispatcher[\\/]client-h2\.js$/.test(args.importer) ? { path: `${root}src/api/http2OnDemand.ts` } : undefined,
    );
  },
};

/**
 * The mock is a bundle of its own (dist/mock/server.js), loaded by `taxprep serve` at run time,
 * with its dependencies left to Node: bundled with the CLI (zod in particular), the same server
 * answered about an eighth fewer requests a second (bench/throughput.bench.js).
 */
const MOCK_SERVER_SOURCE = 'src/mock/server.ts';
const mockServerApart = {
  name: 'mock-server-apart',
  setup(builder) {
    builder.onResolve({ filter: /[\\/]mock[\\/]server$/ }, (args) =>
      /[\\/]commands[\\/]serve[\\/]serve\.ts$/.test(args.importer) ? { path: '../mock/server.js', external: true } : undefined,
    );
  },
};

/** @type {import('esbuild').BuildOptions} */
const common = { absWorkingDir: root, bundle: true, format: 'esm', platform: 'node', target: 'node20', logLevel: 'warning' };

/** @type {import('esbuild').BuildOptions} */
export const mockBuildOptions = { ...common, entryPoints: [MOCK_SERVER_SOURCE], outfile: 'dist/mock/server.js', packages: 'external' };

/** @type {import('esbuild').BuildOptions} */
export const buildOptions = {
  ...common,
  entryPoints: ['src/cli.ts'],
  outdir: 'dist',
  splitting: true,
  chunkNames: 'chunks/[name]-[hash]',
  // Dependencies are bundled: resolving and reading hundreds of small files is most of what Node
  // does before a command can run. Left out: conf, whose dependencies load their own files at run
  // time, jq-wasm, which reads its jq.wasm from beside its own module (loaded only for --jq), and
  // the mock (its own bundle, above).
  external: ['conf', 'jq-wasm'],
  // Bundled CommonJS (undici, commander) calls `require` for Node's modules; ESM has none.
  banner: { js: "import { createRequire as __taxprepCreateRequire } from 'node:module'; const require = __taxprepCreateRequire(import.meta.url);" },
  plugins: [http2OnDemand, mockServerApart],
};

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const { version } = (await import('../package.json', { with: { type: 'json' } })).default;
  // A clean directory: chunk names carry content hashes, so stale chunks would pile up.
  rmSync(`${root}dist`, { recursive: true, force: true });
  await Promise.all([build({ ...buildOptions, define: { TAXPREP_VERSION: JSON.stringify(version) } }), build(mockBuildOptions)]);
}
