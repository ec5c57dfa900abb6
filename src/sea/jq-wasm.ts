import { getAsset } from 'node:sea';

/**
 * jq-wasm as the single executable loads it (bin/release.js): its jq.wasm is an asset of the
 * executable, not a file beside the module. The CLI calls `loadJq()` as it does on an npm install.
 * Required, not imported: jq-wasm's ES module build finds its directory through import.meta.url,
 * which a CommonJS bundle has not.
 */
const jqWasm = require('jq-wasm') as typeof import('jq-wasm');

export function loadJq(): ReturnType<typeof jqWasm.loadJq> {
  return jqWasm.loadJq({ wasmBinary: new Uint8Array(getAsset('jq.wasm')) });
}
