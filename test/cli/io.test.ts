import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { askYesNo, browserCommand, colorEnabled, createIO, readSecret } from '../../src/io';
import { CapturedStream } from '../helpers/context';

describe('colour', () => {
  it.each([
    ['a terminal', true, {}, true, true],
    ['a pipe', false, {}, true, false],
    ['--no-color', true, {}, false, false],
    ['NO_COLOR=1', true, { NO_COLOR: '1' }, true, false],
    ['NO_COLOR empty is ignored', true, { NO_COLOR: '' }, true, true],
    ['TERM=dumb', true, { TERM: 'dumb' }, true, false],
    ['FORCE_COLOR=1 in a pipe', false, { FORCE_COLOR: '1' }, true, true],
    ['FORCE_COLOR=0 on a terminal', true, { FORCE_COLOR: '0' }, true, true],
    ['FORCE_COLOR beats NO_COLOR', false, { FORCE_COLOR: '1', NO_COLOR: '1' }, true, true],
    ['--no-color beats FORCE_COLOR', true, { FORCE_COLOR: '1' }, false, false],
  ])('%s', (_name, isTTY, env, flag, expected) => {
    expect(colorEnabled(isTTY, env, flag)).toBe(expected);
  });

  it('is decided per stream, with the terminal width for tables', () => {
    const io = createIO({ env: {}, color: true, stdout: new CapturedStream({ isTTY: false }), stderr: new CapturedStream({ isTTY: true, columns: 132 }), stdin: new PassThrough() });
    expect([io.stdoutColor, io.stderrColor, io.stdinIsTTY, io.columns]).toEqual([false, true, false, 80]);
  });
});

describe('reading a secret', () => {
  it('from a pipe: the first line, trimmed, and no prompt', async () => {
    const stdin = new PassThrough();
    stdin.end('  tpk_fromPipe0000000000000000001  \nsecond line\n');
    const stderr = new CapturedStream({ isTTY: false });
    const io = createIO({ env: {}, color: false, stdout: new CapturedStream({ isTTY: false }), stderr, stdin });
    expect(await readSecret(io, 'Key: ')).toBe('tpk_fromPipe0000000000000000001');
    expect(stderr.text()).toBe('');
  });

  it('on a terminal: prompts on stderr, never echoes, handles backspace', async () => {
    const stdin = Object.assign(new PassThrough(), { isTTY: true, rawModes: [] as boolean[], setRawMode(on: boolean) { this.rawModes.push(on); } });
    const stderr = new CapturedStream({ isTTY: true });
    const stdout = new CapturedStream({ isTTY: true });
    const io = createIO({ env: {}, color: false, stdout, stderr, stdin });
    const secret = readSecret(io, 'Key: ');
    stdin.write('tpk_typedX\u007f');
    stdin.write('Key0000000000000000001\r');
    expect(await secret).toBe('tpk_typedKey0000000000000000001');
    expect(stderr.text()).toBe('Key: \n');
    expect(stdout.text()).toBe('');
    expect(stdin.rawModes).toEqual([true, false]);
  });

  it('on Ctrl-C: finishes the prompt line, restores the terminal, then interrupts', async () => {
    const stdin = Object.assign(new PassThrough(), { isTTY: true, rawModes: [] as boolean[], setRawMode(on: boolean) { this.rawModes.push(on); } });
    const stderr = new CapturedStream({ isTTY: true });
    const io = createIO({ env: {}, color: false, stdout: new CapturedStream({ isTTY: true }), stderr, stdin });
    const seen: string[] = [];
    const secret = readSecret(io, 'Key: ', () => {
      seen.push(`interrupted after ${JSON.stringify(stderr.text())}, raw ${stdin.rawModes.join(',')}`);
    });
    stdin.write('tpk_half\u0003');
    await expect(secret).rejects.toMatchObject({ exitCode: 2 });
    expect(seen).toEqual(['interrupted after "Key: \\n", raw true,false']);
  });
});

it('opens a browser only where one can be launched', () => {
  expect(browserCommand('linux', {})).toBeUndefined();
  expect(browserCommand('linux', { DISPLAY: ':0' })?.command).toBe('xdg-open');
  expect(browserCommand('darwin', {})?.command).toBe('open');
  expect(browserCommand('darwin', { BROWSER: 'none' })).toBeUndefined();
});

describe('asking yes or no', () => {
  it.each([
    ['y\n', true],
    ['YES\n', true],
    [' yes \r\n', true],
    ['\n', false],
    ['n\n', false],
    ['yep\n', false],
    ['', false],
  ])('%j is %s', async (typed, expected) => {
    const stdin = Object.assign(new PassThrough(), { isTTY: true });
    stdin.end(typed);
    const stderr = new CapturedStream({ isTTY: true });
    const io = createIO({ env: {}, color: false, stdout: new CapturedStream({ isTTY: true }), stderr, stdin });
    expect(await askYesNo(io, 'Continue?')).toBe(expected);
    // The end of input leaves the cursor after the question: the line is finished for what follows.
    expect(stderr.text()).toBe(typed === '' ? 'Continue? [y/N] \n' : 'Continue? [y/N] ');
  });
});
