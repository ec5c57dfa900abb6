// A mock service and a temporary profile, for the scripts that run taxprep as a person would
// (`npm run demo`, `npm run readme-examples`). It never touches the user's profiles or ledger: HOME
// and the XDG directories point into a temporary directory, removed by `close()` once every process
// started here has exited (the CLI writes its compiled-code cache there as it exits).
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const TAXPREP = fileURLToPath(new URL('./taxprep.cjs', import.meta.url));

/**
 * Starts `taxprep serve --mock --port 0 --json` with `serveArgs`; `columns`: commands print as on a
 * terminal that wide (TAXPREP_FORCE_TTY), colour off.
 */
export async function openMockSession({ columns, serveArgs = [] } = {}) {
  const home = mkdtempSync(join(tmpdir(), 'taxprep-demo-'));
  // The user's own TAXPREP_* settings must not steer the commands, nor a profile land in their config.
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('TAXPREP_')));
  Object.assign(env, { HOME: home, XDG_CONFIG_HOME: join(home, 'config'), XDG_DATA_HOME: join(home, 'data'), BROWSER: 'none' });
  if (columns !== undefined) Object.assign(env, { TAXPREP_FORCE_TTY: String(columns), NO_COLOR: '1' });

  /** Every process started and not yet exited: the temporary directory goes only after the last. */
  const running = new Set();
  const taxprep = (args, stdio) => {
    const child = spawn(process.execPath, [TAXPREP, ...args], { env, stdio });
    const closed = new Promise((resolve) => child.once('close', resolve).once('error', resolve));
    running.add(closed);
    void closed.then(() => running.delete(closed));
    return child;
  };

  const mock = taxprep(['serve', '--mock', '--port', '0', '--json', ...serveArgs], ['ignore', 'pipe', 'inherit']);
  const close = async () => {
    if (mock.exitCode === null && mock.signalCode === null) mock.kill('SIGTERM');
    await Promise.all(running);
    try {
      rmSync(home, { recursive: true, force: true, maxRetries: 3 });
    } catch (error) {
      process.stderr.write(`warning: could not remove the temporary directory ${home}: ${error instanceof Error ? error.message : String(error)}\n`);
    }
  };
  try {
    const started = await new Promise((resolve, reject) => {
      let buffered = '';
      mock.stdout.on('data', (chunk) => {
        buffered += chunk.toString('utf8');
        const end = buffered.indexOf('\n');
        if (end >= 0) resolve(JSON.parse(buffered.slice(0, end)));
      });
      mock.once('exit', (code) => reject(new Error(`the mock exited with code ${code} before it started`)));
      mock.once('error', reject);
    });
    // The demo partner's everyday key: one that never expires and may do everything.
    const [key] = [...started.keys]
      .filter((candidate) => candidate.expires_at === null)
      .sort((a, b) => b.permissions.length - a.permissions.length || a.partner_id - b.partner_id);
    return { home, env, started, key, taxprep, close };
  } catch (error) {
    await close();
    throw error;
  }
}
