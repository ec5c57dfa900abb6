import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { manPages } from '../../src/commands/man';
import { longName, walk, type CommandSpec } from '../../src/commands/spec';
import { program } from '../../src/commands/tree';
import { EXIT } from '../../src/errors';

const manDirectory = fileURLToPath(new URL('../../man/', import.meta.url));
const manifest = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string; man: string[] };
const { version } = manifest;
const pages = manPages(program, version);
const page = (file: string) => pages.find((candidate) => candidate.file === file)!.text;
/** A page as a reader sees it: roff's escapes and requests left out. */
const plain = (text: string) => text.replace(/\\-/g, '-').replace(/\\f[BIR]/g, '').replace(/\\e/g, '\\');

describe('man pages (man/, written by npm run completions)', () => {
  it('the checked-in pages are exactly what the declarations generate (run npm run completions)', () => {
    expect(readdirSync(manDirectory).sort()).toEqual(pages.map((candidate) => candidate.file).sort());
    for (const { file, text } of pages) expect(readFileSync(`${manDirectory}${file}`, 'utf8'), file).toBe(text);
  });

  it('package.json lists every page, for npm install -g to link', () => {
    expect(manifest.man).toEqual(pages.map((candidate) => `man/${candidate.file}`));
  });

  it('has taxprep(1) and a page for every visible command, hidden ones left out', () => {
    const expected = ['taxprep.1', ...walk(program).slice(1).map(({ path }) => `taxprep-${path.join('-')}.1`)];
    expect(pages.map((candidate) => candidate.file)).toEqual(expected);
    expect(expected).toContain('taxprep-docs-upload.1');
    expect(expected).not.toContain('taxprep-__complete.1');
  });

  it('a command page names every flag the command declares, with its rule, and its examples', () => {
    const upload = plain(page('taxprep-docs-upload.1'));
    const spec = walk(program).find(({ path }) => path.join(' ') === 'docs upload')!.spec;
    for (const flag of spec.flags ?? []) expect(upload).toContain(longName(flag));
    expect(upload).toContain('tax year of the documents, such as 2025 (required)');
    expect(upload).toContain('$ taxprep docs upload');
    expect(upload).toMatch(/^\.TH "TAXPREP-DOCS-UPLOAD" "1"/m);
  });

  it('taxprep(1) lists every command, the environment, every exit code and the files', () => {
    const main = plain(page('taxprep.1'));
    for (const { path, spec } of walk(program)) if (path.length > 0 && spec.load) expect(main).toContain(`taxprep-${path.join('-')}(1)`);
    expect(main).toContain('.SH ENVIRONMENT');
    expect(main).toContain('TAXPREP_API_KEY');
    for (const code of Object.values(EXIT)) expect(main).toMatch(new RegExp(`^\\.TP\\n${code}\\n`, 'm'));
    expect(main).toContain('$XDG_CONFIG_HOME/taxprep/profiles.json');
  });

  it('a command added to the declarations gets its page, and the nouns above it theirs', () => {
    const added: CommandSpec = { name: 'import', description: 'Import accounts from a CSV file', arguments: [{ name: '<file>', help: 'the CSV file' }], load: async () => ({ parseOptions: () => ({}), run: async () => 0 }) };
    const tree: CommandSpec = { ...program, subcommands: [{ name: 'accounts', description: 'Client accounts', subcommands: [added] }] };
    const files = manPages(tree, '9.9.9').map((candidate) => candidate.file);
    expect(files).toEqual(['taxprep.1', 'taxprep-accounts.1', 'taxprep-accounts-import.1']);
    expect(plain(manPages(tree, '9.9.9')[2]!.text)).toContain('taxprep accounts import [options] <file>');
  });

  it('text that would read as roff requests or escapes prints as written', () => {
    const tricky: CommandSpec = { name: 'x', description: 'Back\\slash', notes: ".leading dot\n\n'leading quote", load: async () => ({ parseOptions: () => ({}), run: async () => 0 }) };
    const text = manPages({ ...program, subcommands: [tricky] }, '1')[1]!.text;
    expect(text).toContain('Back\\eslash');
    expect(text).toContain(".PP\n\\&.leading dot\n.PP\n\\&'leading quote");
    expect(text).not.toMatch(/^\.leading/m);
  });

  // groff is what `man` renders with; a workstation without it skips this.
  it.skipIf(spawnSync('groff', ['--version']).error !== undefined)('every page renders without a warning from groff', () => {
    const result = spawnSync('groff', ['-man', '-ww', '-z'], { input: pages.map(({ text }) => text).join(''), encoding: 'utf8' });
    expect(result.stderr).toBe('');
  });
});
