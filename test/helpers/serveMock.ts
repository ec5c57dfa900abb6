import type { ResultPromise } from 'execa';
import { startCli } from './cli';

export interface ServedMock {
  baseUrl: string;
  appUrl: string;
  /** Plain keys by their label in the fixture (demo data: see DEMO_API_KEYS). */
  keys: Record<string, string>;
  process: ResultPromise;
  /** Sends SIGTERM and waits for the process to end; resolves to its exit code. */
  stop(): Promise<number | undefined>;
}

/**
 * Runs the real built CLI, `taxprep serve --mock --port 0 --json`, and waits for its start-up
 * line. Needs `npm run build` first (the test command does it). `env` adds variables (a test's
 * crash point).
 */
export async function startServeMock(extraArgs: string[] = [], options: { env?: Record<string, string> } = {}): Promise<ServedMock> {
  // The start line names the keys the mock made, in full, as it promises: stdout is not scanned, stderr is.
  const { child, result } = startCli(['serve', '--mock', '--port', '0', '--json', ...extraArgs], { env: { NO_COLOR: '1', ...options.env }, stdin: 'ignore', keysOnStdout: true });
  const stdout = await waitForStdout(child, (text) => text.includes('\n'));
  const started = JSON.parse(stdout.slice(0, stdout.indexOf('\n'))) as { base_url: string; app_url: string; keys: Array<{ key: string; label: string }> };
  return {
    baseUrl: started.base_url,
    appUrl: started.app_url,
    keys: Object.fromEntries(started.keys.map((entry) => [entry.label, entry.key])),
    process: child,
    async stop() {
      child.kill('SIGTERM');
      return (await result).exitCode;
    },
  };
}

/**
 * Resolves with stdout so far once `isComplete` accepts it; rejects with stderr when the process
 * ends first (a failed start must fail the test, not time it out).
 */
export function waitForStdout(child: ResultPromise, isComplete: (stdout: string) => boolean): Promise<string> {
  return new Promise((resolve, reject) => {
    let buffered = '';
    const onData = (chunk: Buffer) => {
      buffered += chunk.toString('utf8');
      if (isComplete(buffered)) {
        child.stdout?.off('data', onData);
        resolve(buffered);
      }
    };
    child.stdout?.on('data', onData);
    void child.then((result) => reject(new Error(`taxprep serve exited with ${result.exitCode} before starting: ${String(result.stderr)}`)));
  });
}
