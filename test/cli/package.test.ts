import { execa } from 'execa';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));

/** What an installed taxprep needs: the launcher, the build, completions, man pages, and npm's own two files. */
const NEEDED = [/^bin\/taxprep\.cjs$/, /^dist\/cli\.cjs$/, /^dist\/cli\.cjs\.LEGAL\.txt$/, /^dist\/launch\.cjs$/, /^dist\/mock\/server\.cjs$/, /^completions\/(taxprep\.bash|_taxprep|taxprep\.fish)$/, /^man\/taxprep(-[a-z-]+)?\.1$/, /^README\.md$/, /^package\.json$/];

describe('the npm package (npm pack)', () => {
  it('holds what the installed tool needs and nothing else: no sources, tests, bench or build scripts', async () => {
    const { stdout } = await execa('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: root });
    const files = (JSON.parse(stdout) as Array<{ files: Array<{ path: string }> }>)[0]!.files.map((file) => file.path);
    expect(files.filter((file) => !NEEDED.some((pattern) => pattern.test(file)))).toEqual([]);
    for (const required of ['bin/taxprep.cjs', 'dist/cli.cjs', 'dist/launch.cjs', 'dist/mock/server.cjs', 'completions/taxprep.bash', 'man/taxprep.1', 'man/taxprep-docs-upload.1']) expect(files).toContain(required);
  });
});
