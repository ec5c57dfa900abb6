import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cliCommandLine, runScanned } from '../helpers/cli';
import { beforeAll, describe, expect, it } from 'vitest';
import { completionScript, describeTree } from '../../src/commands/completion/generate';
import { program } from '../../src/commands/tree';
import { LOGIN_LINK_PURPOSES } from '../../src/contract/vocabulary';

const root = (path: string) => fileURLToPath(new URL(`../../${path}`, import.meta.url));
const committed = { bash: 'completions/taxprep.bash', zsh: 'completions/_taxprep', fish: 'completions/taxprep.fish' } as const;
type Shell = keyof typeof committed;

describe('shell completions', () => {
  it.each(Object.entries(committed))('the committed %s script is what the declarations generate (npm run completions)', (shell, path) => {
    expect(completionScript(program, shell as Shell)).toBe(readFileSync(root(path), 'utf8'));
  });

  it('knows every command, its flags and the contract enum values', () => {
    const byPath = new Map(describeTree(program).map((node) => [node.path, node]));
    expect(byPath.get('taxprep')?.subcommands.map((sub) => sub.name)).toEqual(expect.arrayContaining(['health', 'accounts', 'profiles', 'whoami', 'api', 'completion', 'help']));
    expect(byPath.has('taxprep/__complete')).toBe(false);
    expect(byPath.get('taxprep/completion')?.operands).toEqual({ kind: 'words', words: ['bash', 'zsh', 'fish'] });
    const status = byPath.get('taxprep/projects/list')?.flags.find((flag) => flag.names.includes('--status'));
    expect(status?.value).toEqual({ kind: 'words', words: ['waiting_on_client', 'in_progress', 'in_review', 'completed'] });
  });
});

/**
 * The generated scripts in the real shells, as a person pressing Tab gets them: bash with the
 * bash-completion package, zsh's compsys (under a pseudo-terminal), fish's `complete -C`. A
 * missing shell skips these on a workstation and fails them in CI (CI=true).
 */
const API_KEY = 'tpk_completionTestKey0000000000077';
let work: string;
let env: Record<string, string>;

beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'taxprep-completion-'));
  const bin = join(work, 'bin');
  mkdirSync(bin);
  writeFileSync(join(bin, 'taxprep'), `#!/bin/sh\nexec ${cliCommandLine()} "$@"\n`);
  chmodSync(join(bin, 'taxprep'), 0o755);
  mkdirSync(join(work, 'files'));
  for (const name of ['w2.pdf', '1099-int.pdf', 'clients.csv']) writeFileSync(join(work, 'files', name), 'x');
  mkdirSync(join(work, 'config', 'taxprep'), { recursive: true });
  const profile = { base_url: 'http://127.0.0.1:4010/v1beta', api_key: API_KEY };
  writeFileSync(join(work, 'config', 'taxprep', 'profiles.json'), JSON.stringify({ default_profile: 'acme', profiles: { acme: profile, staging: profile } }), { mode: 0o600 });
  env = { PATH: `${bin}:${process.env.PATH ?? '/usr/bin:/bin'}`, HOME: work, XDG_CONFIG_HOME: join(work, 'config') };
});

const BASH_COMPLETION = '/usr/share/bash-completion/bash_completion';

/** The candidates `shell` offers for `line` (which ends where Tab is pressed), sorted. */
async function complete(shell: Shell, line: string): Promise<string[]> {
  const options = { cwd: join(work, 'files'), env, extendEnv: false, timeout: 30_000, reject: true };
  const words = line.split(' ');
  const result =
    shell === 'bash'
      ? await runScanned('bash', ['--norc', '-c', [
          `source ${BASH_COMPLETION}`,
          `source ${JSON.stringify(root(committed.bash))}`,
          `COMP_WORDS=(${words.map((word) => `'${word}'`).join(' ')}); COMP_CWORD=${words.length - 1}; COMP_LINE='${line}'; COMP_POINT=${line.length}`,
          `_taxprep taxprep '${words.at(-1)}' '${words.at(-2)}'`,
          `printf '%s\\n' "\${COMPREPLY[@]}"`,
        ].join('\n')], options)
      : shell === 'zsh'
        ? await runScanned('zsh', ['-f', root('test/helpers/zsh-complete.zsh'), join(root(committed.zsh), '..'), line], options)
        : await runScanned('fish', ['--no-config', '-c', `source ${JSON.stringify(root(committed.fish))}; complete -C '${line}'`], options);
  expect(result.stdout + result.stderr).not.toContain(API_KEY);
  return result.stdout.split('\n').map((candidate) => candidate.split('\t')[0]!).filter((candidate) => candidate !== '').sort();
}

const FILES = ['1099-int.pdf', 'clients.csv', 'w2.pdf'];
const PROFILES = ['acme', 'staging'];

function present(shell: Shell): boolean {
  const found = spawnSync('sh', ['-c', `command -v ${shell}`]).status === 0;
  return shell === 'bash' ? found && existsSync(BASH_COMPLETION) : found;
}

describe.each(Object.keys(committed) as Shell[])('%s, in the real shell', (shell) => {
  const skip = !present(shell) && process.env.CI !== 'true';

  it.skipIf(skip)('completes files for file arguments and file flags', async () => {
    const [upload, from, renewFrom] = await Promise.all([
      complete(shell, 'taxprep docs upload 1001 '),
      complete(shell, 'taxprep login-link --from '),
      complete(shell, 'taxprep login-link renew --from '),
    ]);
    expect(upload).toEqual(FILES);
    expect(from).toEqual(FILES);
    expect(renewFrom).toEqual(FILES);
  });

  it.skipIf(skip)('offers stored profile names, and never a key', async () => {
    const lines = ['taxprep --profile ', 'taxprep accounts get --profile ', 'taxprep profiles use ', 'taxprep profiles show ', 'taxprep profiles remove '];
    for (const candidates of await Promise.all(lines.map((line) => complete(shell, line)))) expect(candidates).toEqual(PROFILES);
  });

  it.skipIf(skip)('offers a subcommand its own flags, a flag its contract values, help its topics', async () => {
    const [renewFlags, purposes, topics] = await Promise.all([
      complete(shell, 'taxprep login-link renew --'),
      complete(shell, 'taxprep login-link renew --purpose '),
      complete(shell, 'taxprep help '),
    ]);
    expect(renewFlags).toEqual(expect.arrayContaining(['--from', '--within', '--dry-run', '--purpose', '--json']));
    expect(renewFlags).not.toContain('--user-email');
    expect(renewFlags).not.toContain('--restart');
    expect(purposes).toEqual([...LOGIN_LINK_PURPOSES].sort());
    expect(topics).toEqual(expect.arrayContaining(['environment', 'exit-codes', 'docs', 'login-link']));
  });
});

/** The completion steps of docs/install.md, run as written in a fresh home, then each shell loading the script on demand. */
describe('the install steps of docs/install.md', () => {
  const guide = readFileSync(root('docs/install.md'), 'utf8');
  const section = guide.slice(guide.indexOf('## Shell completion'), guide.indexOf('\n## ', guide.indexOf('## Shell completion')));
  const steps = [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((match) => match[1]!);
  const missing = (Object.keys(committed) as Shell[]).filter((shell) => !present(shell));

  it.skipIf(missing.length > 0 && process.env.CI !== 'true')('install the scripts where bash-completion, zsh and fish find them', async () => {
    expect(steps).toHaveLength(3);
    const home = mkdtempSync(join(tmpdir(), 'taxprep-completion-home-'));
    const options = { cwd: home, env: { PATH: env.PATH!, HOME: home }, extendEnv: false, timeout: 30_000, reject: true };
    for (const step of steps) await runScanned('sh', ['-ec', step], options);
    const bash = await runScanned('bash', ['-c', `source ${BASH_COMPLETION}; _completion_loader taxprep; complete -p taxprep`], options);
    expect(bash.stdout).toBe('complete -F _taxprep taxprep');
    const zsh = await runScanned('zsh', ['-i', '-c', 'print -r -- $_comps[taxprep]'], options);
    expect(zsh.stdout.trim().split('\n').at(-1)).toBe('_taxprep');
    const fish = await runScanned('fish', ['-c', "complete -C 'taxprep login-link renew --pur'"], options);
    expect(fish.stdout).toBe('--purpose\trecorded for audit');
  });
});
