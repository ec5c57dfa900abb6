import { writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeHome, runCli, startCli, type StartedCli } from '../helpers/cli';

/**
 * `taxprep hooks listen`, the real CLI: requests signed with the `standardwebhooks` reference
 * library (not taxprep's own signing code), and what a person trying a hook sees of each.
 */

// The Standard Webhooks spec's example secret, and a second one for a rotation.
const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const NEXT_SECRET = 'whsec_cmVwbGFjZW1lbnQtc2VjcmV0LTMyLWJ5dGVzLWxvbmc=';
const BASE_URL = 'http://127.0.0.1:9/v1beta';

let home: string;
const running: StartedCli[] = [];

beforeEach(() => {
  home = makeHome();
});
afterEach(async () => {
  for (const started of running.splice(0)) {
    started.child.kill('SIGKILL');
    await started.result;
  }
});

interface Listener {
  started: StartedCli;
  url: string;
  stdout: () => string;
  stderr: () => string;
  /** Resolves once `output()` satisfies `done`. */
  until: (output: () => string, done: (text: string) => boolean) => Promise<string>;
}

/** Starts `taxprep hooks listen --port 0` with `args`, once it says where it receives. */
async function listen(args: string[], secrets: string[] = [SECRET], port = 0): Promise<Listener> {
  const secretFile = join(home, 'hook.secret');
  writeFileSync(secretFile, `${secrets.join('\n')}\n`, { mode: 0o600 });
  const started = startCli(['hooks', 'listen', '--port', String(port), '--secret-file', secretFile, ...args], { home, stdin: 'ignore', env: { TAXPREP_BASE_URL: BASE_URL } });
  running.push(started);
  let stdout = '';
  let stderr = '';
  started.child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  started.child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const until = async (output: () => string, done: (text: string) => boolean) => {
    for (let waited = 0; !done(output()); waited += 20) {
      if (waited > 10_000) throw new Error(`hooks listen did not print what was expected; stdout: ${stdout} stderr: ${stderr}`);
      if (started.child.exitCode !== null) throw new Error(`hooks listen ended (${started.child.exitCode}); stderr: ${stderr}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    return output();
  };
  const line = await until(() => stderr, (text) => text.includes('\n'));
  const bound = /^hooks listen: receiving on http:\/\/127\.0\.0\.1:(\d+)\/ \(Ctrl-C to stop\)\n$/.exec(line)?.[1];
  expect(bound, line).toBeDefined();
  if (port !== 0) expect(bound).toBe(String(port));
  return { started, url: `http://127.0.0.1:${bound}`, stdout: () => stdout, stderr: () => stderr, until };
}

/** Stops a listener (SIGINT) and waits for it to end. */
async function stop(listener: Listener): Promise<void> {
  running.splice(running.indexOf(listener.started), 1);
  listener.started.child.kill('SIGINT');
  await listener.started.result;
}

/** A port free right now on 127.0.0.1, for a hook added before its receiver starts. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

const progress = (projectId: number) =>
  JSON.stringify({
    type: 'project.progress',
    timestamp: '2026-11-25T10:00:00.000Z',
    data: { event: 'project.progress', account_id: 1001, project_id: projectId, old: 20, new: 45, seen_at: '2026-11-25T10:00:00.000Z' },
  });

/** Standard Webhooks headers for `body`, signed by the reference library with each of `secrets`. */
function signed(id: string, body: string, secrets: string[] = [SECRET], at = new Date()): Record<string, string> {
  return {
    'content-type': 'application/json',
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': secrets.map((secret) => new Webhook(secret).sign(id, at, body)).join(' '),
  };
}

async function post(listener: Listener, body: string, headers: Record<string, string>, path = '/hook'): Promise<number> {
  const response = await fetch(`${listener.url}${path}`, { method: 'POST', headers, body });
  await response.arrayBuffer();
  return response.status;
}

describe('hooks listen', () => {
  it('answers 204 to a request the reference library signed and prints the event on stdout, one line each', async () => {
    const listener = await listen([]);
    expect(await post(listener, progress(5001), signed('msg_one', progress(5001)))).toBe(204);
    expect(await post(listener, progress(5002), signed('msg_two', progress(5002)))).toBe(204);
    const printed = await listener.until(listener.stdout, (text) => text.split('\n').length === 3);
    expect(printed).toBe(
      'verified msg_one project.progress: project.progress of project 5001 (account 1001): 20 -> 45.\n' +
        'verified msg_two project.progress: project.progress of project 5002 (account 1001): 20 -> 45.\n',
    );
    expect(listener.stderr()).not.toContain('refused');
  });

  it('refuses with 401 and says why on stderr: a bad signature, a stale or future timestamp, a missing header; prints nothing on stdout', async () => {
    const listener = await listen([]);
    const body = progress(5001);
    const stale = new Date(Date.now() - 10 * 60_000);
    const future = new Date(Date.now() + 10 * 60_000);
    const unsigned = signed('msg_missing', body);
    delete unsigned['webhook-signature'];
    const cases: Array<[Record<string, string>, string]> = [
      [signed('msg_bad', body, ['whsec_c29tZW9uZS1lbHNlcy1zZWNyZXQtMzItYnl0ZXM=']), 'no signature matches the secret'],
      [{ ...signed('msg_tampered', body), 'webhook-id': 'msg_other' }, 'no signature matches the secret'],
      [signed('msg_stale', body, [SECRET], stale), `webhook-timestamp ${Math.floor(stale.getTime() / 1000)} is not within 300s of now`],
      [signed('msg_future', body, [SECRET], future), `webhook-timestamp ${Math.floor(future.getTime() / 1000)} is not within 300s of now`],
      [unsigned, 'missing webhook-id, webhook-timestamp or webhook-signature'],
    ];
    for (const [headers, why] of cases) expect(await post(listener, body, headers)).toBe(401);
    // The body changed after signing: the signature no longer matches either.
    expect(await post(listener, progress(5999), signed('msg_body', body))).toBe(401);
    const lines = await listener.until(listener.stderr, (text) => text.split('\n').length === cases.length + 3);
    expect(lines.split('\n').slice(1, -1)).toEqual([...cases.map(([, why]) => `hooks listen: refused POST /hook: ${why}`), 'hooks listen: refused POST /hook: no signature matches the secret']);
    expect(listener.stdout()).toBe('');
  });

  it('answers 400 to a signed body that is not JSON (every delivery is), saying so; nothing on stdout', async () => {
    const listener = await listen([]);
    expect(await post(listener, 'not json', signed('msg_text', 'not json'))).toBe(400);
    await listener.until(listener.stderr, (text) => text.split('\n').length === 3);
    expect(listener.stderr().split('\n')[1]).toBe('hooks listen: refused POST /hook: the body is not JSON (a Standard Webhooks body is a JSON document)');
    // JSON that is not an event (a `--format text` body, a bare value) is still printed as it came.
    expect(await post(listener, '{"text":"Project 5001 moved."}', signed('msg_chat', '{"text":"Project 5001 moved."}'))).toBe(204);
    expect(await post(listener, 'null', signed('msg_null', 'null'))).toBe(204);
    expect(await post(listener, '{"type":"project.progress","data":null}', signed('msg_nodata', '{"type":"project.progress","data":null}'))).toBe(204);
    expect(await listener.until(listener.stdout, (text) => text.split('\n').length === 4)).toBe(
      'verified msg_chat (no type): {"text":"Project 5001 moved."}\n' + 'verified msg_null (no type): null\n' + 'verified msg_nodata project.progress: {"type":"project.progress","data":null}\n',
    );
  });

  it('answers 413 to a body over 1 MiB', async () => {
    const listener = await listen([]);
    const body = JSON.stringify({ type: 'project.progress', data: { padding: 'x'.repeat(1024 * 1024) } });
    expect(await post(listener, body, signed('msg_large', body))).toBe(413);
    await listener.until(listener.stderr, (text) => text.split('\n').length === 3);
    expect(listener.stderr().split('\n')[1]).toBe('hooks listen: refused POST /hook: the body is larger than 1 MiB');
  });

  it('verifies with either secret of a rotation (a secret file of two lines)', async () => {
    const listener = await listen([], [SECRET, NEXT_SECRET]);
    expect(await post(listener, progress(5001), signed('msg_old', progress(5001), [SECRET]))).toBe(204);
    expect(await post(listener, progress(5002), signed('msg_new', progress(5002), [NEXT_SECRET]))).toBe(204);
    expect(await post(listener, progress(5003), signed('msg_both', progress(5003), [NEXT_SECRET, SECRET]))).toBe(204);
    const printed = await listener.until(listener.stdout, (text) => text.split('\n').length === 4);
    expect(printed.split('\n').slice(0, -1).map((line) => line.split(' ')[1])).toEqual(['msg_old', 'msg_new', 'msg_both']);
    expect(listener.stderr()).not.toContain('refused');

  });

  it('verifies taxprep\'s own delivery of a rotated hook (two signatures) knowing either secret alone', async () => {
    const env = { TAXPREP_BASE_URL: BASE_URL };
    const port = await freePort();
    const added = JSON.parse((await runCli(['hooks', 'add', '--insecure-storage', `http://127.0.0.1:${port}/`, '--json'], { home, env })).stdout) as { id: string; secret: string };
    expect((await runCli(['hooks', 'rotate-secret', added.id], { home, env })).exitCode).toBe(0);
    const next = (await runCli(['hooks', 'show', added.id, '--secret'], { home, env })).stdout.trim();
    expect(next).toMatch(/^whsec_/);
    expect(next).not.toBe(added.secret);
    for (const secret of [added.secret, next]) {
      const listener = await listen([], [secret], port);
      const pinged = await runCli(['hooks', 'test', added.id], { home, env });
      expect(pinged.stderr).toMatch(/^Delivered: taxprep\.ping msg_\w+ to http:\/\/127\.0\.0\.1:\d+\/ \(HTTP 204\)\.\n$/);
      expect(pinged.exitCode).toBe(0);
      expect(await listener.until(listener.stdout, (text) => text.includes('\n'))).toMatch(/^verified msg_\w+ taxprep\.ping: taxprep: test delivery \(taxprep\.ping\)\.\n$/);
      await stop(listener);
    }
    const stranger = await listen([], ['whsec_c29tZW9uZS1lbHNlcy1zZWNyZXQtMzItYnl0ZXM='], port);
    const refused = await runCli(['hooks', 'test', added.id], { home, env });
    expect(refused).toMatchObject({ exitCode: 7, stdout: '' });
    expect(refused.stderr).toMatch(/^Not delivered: taxprep\.ping msg_\w+ to http:\/\/127\.0\.0\.1:\d+\/ \(HTTP 401\)\.\n$/);
    expect((await stranger.until(stranger.stderr, (text) => text.split('\n').length === 3)).split('\n')[1]).toBe('hooks listen: refused POST /: no signature matches the secret');
  });

  it('stops cleanly on SIGINT and on SIGTERM: exit 0, a last line on stderr, the port free again', async () => {
    for (const signal of ['SIGINT', 'SIGTERM'] as const) {
      const listener = await listen([]);
      expect(await post(listener, progress(5001), signed('msg_one', progress(5001)))).toBe(204);
      expect(await post(listener, 'x', signed('msg_bad', 'y'))).toBe(401);
      await listener.until(listener.stdout, (text) => text.includes('\n'));
      listener.started.child.kill(signal);
      const result = await listener.started.result;
      expect({ exitCode: result.exitCode, signal: result.signal }).toEqual({ exitCode: 0, signal: undefined });
      expect(result.stderr.split('\n').slice(-2)).toEqual(['hooks listen: stopped; 1 request verified, 1 refused.', '']);
      await expect(fetch(listener.url)).rejects.toThrow();
    }
  });

  it('--json prints one line per verified request: its webhook-id and its body as sent', async () => {
    const listener = await listen(['--json']);
    expect(await post(listener, progress(5001), signed('msg_one', progress(5001)))).toBe(204);
    expect(await post(listener, 'null', signed('msg_null', 'null'))).toBe(204);
    expect(await post(listener, 'x', signed('msg_bad', 'y'))).toBe(401);
    const printed = await listener.until(listener.stdout, (text) => text.split('\n').length === 3);
    expect(printed.split('\n').slice(0, -1).map((line) => JSON.parse(line))).toEqual([
      { webhook_id: 'msg_one', verified: true, body: JSON.parse(progress(5001)) },
      { webhook_id: 'msg_null', verified: true, body: null },
    ]);
  });

  it('refuses to start without a usable secret or on a bad port: exit 2, the flag and the rule', async () => {
    const env = { TAXPREP_BASE_URL: BASE_URL };
    const empty = join(home, 'empty.secret');
    writeFileSync(empty, '\n');
    const none = await runCli(['hooks', 'listen', '--port', '0', '--secret-file', empty], { home, env });
    expect(none).toMatchObject({ exitCode: 2, stdout: '' });
    expect(none.stderr).toContain("hooks listen needs the hook's secret to verify signatures: --secret-file F holding whsec_ secrets, one a line (or TAXPREP_WEBHOOK_SECRET)");
    const missing = await runCli(['hooks', 'listen', '--port', '0', '--secret-file', join(home, 'absent.secret')], { home, env });
    expect(missing).toMatchObject({ exitCode: 2, stdout: '' });
    expect(missing.stderr).toContain(`--secret-file ${join(home, 'absent.secret')} cannot be read (ENOENT)`);
    const port = await runCli(['hooks', 'listen', '--port', '70000'], { home, env: { ...env, TAXPREP_WEBHOOK_SECRET: SECRET } });
    expect(port).toMatchObject({ exitCode: 2, stdout: '' });
    expect(port.stderr).toContain('--port "70000" must be a port number from 0 to 65535');
  });
});
