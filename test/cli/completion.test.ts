import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { buildProgram } from '../../src/cli';
import { completionScript, describeTree } from '../../src/commands/completion/generate';

const committed = {
  bash: 'completions/taxprep.bash',
  zsh: 'completions/_taxprep',
  fish: 'completions/taxprep.fish',
} as const;

const program = () => buildProgram(async () => undefined);

describe('shell completions', () => {
  it.each(Object.entries(committed))('the committed %s script is what the command tree generates (npm run completions)', (shell, path) => {
    const file = readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');
    expect(completionScript(program(), shell as keyof typeof committed)).toBe(file);
  });

  it('knows every command, its flags and the contract enum values', () => {
    const specs = describeTree(program());
    const byPath = new Map(specs.map((spec) => [spec.path, spec]));
    expect(byPath.get('taxprep')?.subcommands).toEqual(expect.arrayContaining(['health', 'accounts', 'profiles', 'whoami', 'api', 'completion']));
    expect(byPath.get('taxprep/profiles')?.subcommands).toEqual(['add', 'list', 'use', 'show', 'remove']);
    expect(byPath.get('taxprep/completion')?.argumentValues).toEqual(['bash', 'zsh', 'fish']);
    const status = byPath.get('taxprep/projects/list')?.flags.find((flag) => flag.names.includes('--status'));
    expect(status?.values).toEqual(['waiting_on_client', 'in_progress', 'in_review', 'completed']);
    const bash = completionScript(program(), 'bash');
    expect(bash).toContain('"taxprep/deliverables/list:--status") COMPREPLY=($(compgen -W "draft completed delivered" -- "$cur")); return ;;');
  });
});
