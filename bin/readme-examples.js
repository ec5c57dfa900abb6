#!/usr/bin/env node
// `npm run readme-examples`: regenerates the terminal screenshots of README.md and the guides in docs/
// from a real run, the files in that order, in one mock session. In each
// ```console block right after a `<!-- readme-example -->` line, every `$ taxprep ARGS` line (a
// `# comment` after it is kept; `>/dev/null` shows stderr alone) is followed by what that command
// prints today against a fresh mock, as on an 80-column terminal without colour, stdout and stderr
// together. `serve --mock` shows the mock's start-up text. The mock's port is shown as 4010, its
// default. Arguments are split at spaces: only simple command lines can be marked.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { openMockSession } from './mockSession.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const FILES = ['README.md', ...readdirSync(`${root}docs`).filter((name) => name.endsWith('.md')).sort().map((name) => `docs/${name}`)];
const MARK = '<!-- readme-example -->';
const BLOCK = new RegExp(`${MARK}\\n\`\`\`console\\n([\\s\\S]*?)\\n\`\`\`\\n`, 'g');
const COMMAND = /^\$ taxprep ([^#>]*?)( >\/dev\/null)?( +#.*)?$/;
const COLUMNS = 80;

/** Runs `args` to its end (or, for the mock, until its start-up text is out), stdout and stderr together. */
function capture(session, args, stderrOnly) {
  return new Promise((resolve, reject) => {
    const serving = args[0] === 'serve';
    const child = session.taxprep(serving ? [...args, '--port', '0'] : args, ['ignore', 'pipe', 'pipe']);
    let output = '';
    const take = (chunk) => {
      output += chunk.toString('utf8');
      if (serving && output.includes('Requests are listed below')) child.kill('SIGINT');
    };
    if (stderrOnly) child.stdout.resume();
    else child.stdout.on('data', take);
    child.stderr.on('data', take);
    child.once('error', reject);
    child.once('close', () => resolve(serving ? output.slice(0, output.indexOf('Mock service stopped')).trimEnd() : output.trimEnd()));
  });
}

const session = await openMockSession({ columns: COLUMNS });
try {
  const profile = session.taxprep(['profiles', 'add', '--insecure-storage', 'readme', '--api-key-stdin', '--base-url', session.started.base_url], ['pipe', 'ignore', 'pipe']);
  profile.stdin.end(`${session.key.key}\n`);
  let refused = '';
  profile.stderr.on('data', (chunk) => (refused += chunk));
  const [code] = await new Promise((resolve) => profile.once('close', (...closed) => resolve(closed)));
  if (code !== 0) throw new Error(`profiles add exited with ${code}: ${refused}`);

  let count = 0;
  for (const file of FILES) {
    const text = readFileSync(`${root}${file}`, 'utf8');
    const blocks = new Map();
    for (const [, body] of text.matchAll(BLOCK)) {
      const lines = [];
      for (const line of body.split('\n').filter((each) => COMMAND.test(each))) {
        const [, command, devNull] = COMMAND.exec(line);
        const output = await capture(session, command.trim().split(/ +/), devNull !== undefined);
        lines.push(line, ...(output === '' ? [] : [output.replace(/127\.0\.0\.1:\d+/g, '127.0.0.1:4010')]));
      }
      blocks.set(body, lines.join('\n'));
    }
    writeFileSync(`${root}${file}`, text.replace(BLOCK, (_, body) => `${MARK}\n\`\`\`console\n${blocks.get(body)}\n\`\`\`\n`));
    count += blocks.size;
  }
  process.stdout.write(`README.md and docs/: ${count} terminal screenshots regenerated.\n`);
} finally {
  await session.close();
}
