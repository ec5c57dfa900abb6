import stringWidth from 'string-width';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliCommandLine, makeHome, runCli, runScanned, startScanned, withoutColor } from '../helpers/cli';
import { startMock, type RunningMock } from '../helpers/mock';

/** What a person at a terminal sees: the real CLI under a pseudo-terminal (`script`) of a given width. */

const LONG_TITLE = '2024 federal and state return, amended 1040-X, 源泉徴収票';
let mock: RunningMock;

beforeAll(async () => {
  mock = await startMock({ rateLimits: [] });
  await mock.request('/_mock/deliverables/9001', { body: { title: LONG_TITLE } });
});
afterAll(() => mock.close());

/** Runs taxprep in a pseudo-terminal `columns` wide; returns what the screen got, without colour. */
async function onTerminal(columns: number, args: string[]) {
  const command = `stty cols ${columns} rows 50; exec ${cliCommandLine(args)}`;
  const result = await runScanned('script', ['-qfec', command, '/dev/null'], {
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: makeHome(), TAXPREP_BASE_URL: mock.baseUrl, TAXPREP_API_KEY: mock.keys.acme },
    extendEnv: false,
    stdin: 'ignore',
  });
  return { exitCode: result.exitCode, lines: withoutColor(String(result.stdout)).replace(/\r\n/g, '\n').trimEnd().split('\n') };
}

describe('tables fit the terminal', () => {
  it('at 80 columns no row is wider than the screen: the date takes its short form first, then the title gives way', async () => {
    const { exitCode, lines } = await onTerminal(80, ['deliverables', 'list']);
    expect(exitCode).toBe(0);
    expect(lines[0]).toMatch(/^ID +PROJECT +ACCOUNT +TYPE +STATUS +TITLE +PREPARED$/);
    expect(Math.max(...lines.map((line) => stringWidth(line)))).toBeLessThanOrEqual(80);
    const row = lines.find((line) => line.startsWith('9001 '));
    expect(row).toMatch(/^9001 +5002 +1001 +quarterly_estimate +draft +\S.*… +\d{4}-\d\d-\d\d$/);
  });

  it('at 160 columns a title longer than 40 characters is shown whole', async () => {
    const { exitCode, lines } = await onTerminal(160, ['deliverables', 'list']);
    expect(exitCode).toBe(0);
    expect(lines.find((line) => line.startsWith('9001 '))).toContain(LONG_TITLE);
    expect(Math.max(...lines.map((line) => stringWidth(line)))).toBeLessThanOrEqual(160);
  });
});

describe('deliverables get with a deliverable id', () => {
  const env = () => ({ TAXPREP_BASE_URL: mock.baseUrl, TAXPREP_API_KEY: mock.keys.acme });

  it("names the deliverable's project and says the command takes a project id", async () => {
    const result = await runCli(['deliverables', 'get', '9001'], { env: env() });
    expect(result.exitCode).toBe(4);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain('error: 9001 is a deliverable id, not a project id: deliverable 9001 belongs to project 5002.');
    expect(result.stderr).toContain('deliverables get takes a project id: run `taxprep deliverables get 5002`.');
  });

  it('keeps the service code in --json, and says which id it takes when the id is nobody’s', async () => {
    const json = await runCli(['deliverables', 'get', '9001', '--json'], { env: env() });
    expect(json.exitCode).toBe(4);
    expect(JSON.parse(json.stderr).error.code).toBe('PROJECT_NOT_FOUND');
    const unknown = await runCli(['deliverables', 'get', '424242'], { env: env() });
    expect(unknown.exitCode).toBe(4);
    expect(unknown.stderr).toContain('No project with id 424242');
    expect(unknown.stderr).toContain('deliverables get takes a project id (the PROJECT column of `taxprep deliverables list`), not a deliverable id.');
  });
});

describe('Ctrl-C at the hidden key prompt', () => {
  it('finishes the prompt line, saves nothing and exits 130', async () => {
    const home = makeHome();
    const { child, result: ended } = startScanned('script', ['-qfec', cliCommandLine(['profiles', 'add', '--insecure-storage', 'work']), '/dev/null'], {
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, XDG_CONFIG_HOME: `${home}/.config` },
      extendEnv: false,
      stdin: 'pipe',
      stripFinalNewline: false,
    });
    let screen = '';
    await new Promise<void>((resolve) => {
      child.stdout!.on('data', (chunk: Buffer) => {
        screen += chunk.toString('utf8');
        if (screen.includes('API key for profile "work" (input is hidden): ')) resolve();
      });
    });
    child.stdin!.write('tpk_half');
    child.stdin!.write('\u0003');
    const result = await ended;
    expect(result.exitCode).toBe(130);
    expect(String(result.stdout).replace(/\r\n/g, '\n')).toBe('API key for profile "work" (input is hidden): \n');
    const list = await runCli(['profiles', 'list'], { home });
    expect(list.stdout).not.toContain('work');
  });
});
