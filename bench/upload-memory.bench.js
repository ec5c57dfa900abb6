// Upload memory: peak RSS growth of `taxprep serve --mock` while it receives a 200 MB document,
// next to a bare node:http server that pipes the same multipart body straight to a file, in the
// same run. Target: the mock grows by less than 64 MB (the upload is streamed, never buffered).
// Both servers are child processes; their RSS is sampled from /proc/<pid>/status every 20 ms.
// The 200 MB file is written to a temporary directory and streamed from disk by the bench too.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createReadStream, createWriteStream, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import FormData from 'form-data';

const MB = 1024 * 1024;
const FILE_BYTES = 200 * MB;
const TARGET_GROWTH_MB = 64;
const SAMPLE_EVERY_MS = 20;
const repoRoot = fileURLToPath(new URL('..', import.meta.url));

const BARE_SERVER = `
const http = require('node:http');
const fs = require('node:fs');
const path = require('node:path');
const target = path.join(process.argv[1], 'bare-upload.bin');
const server = http.createServer((req, res) => {
  req.pipe(fs.createWriteStream(target)).on('finish', () => {
    res.writeHead(201, { 'content-type': 'application/json' }).end('{"id":1}');
  });
});
server.listen(0, '127.0.0.1', () => console.log(JSON.stringify({ base_url: 'http://127.0.0.1:' + server.address().port })));
`;

function rssBytes(pid) {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) * 1024 : 0;
}

/** Starts a server process and resolves with it and the first JSON line it prints. */
async function startServer(args) {
  const child = spawn(process.execPath, args, { cwd: repoRoot, stdio: ['ignore', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout });
  const [line] = await once(lines, 'line');
  return { child, started: JSON.parse(line) };
}

async function stopServer(child) {
  child.kill('SIGTERM');
  if (child.exitCode === null) await once(child, 'exit');
}

async function writeFileOfSize(path, bytes) {
  const chunk = Buffer.alloc(MB, 0x25);
  const out = createWriteStream(path);
  for (let written = 0; written < bytes; written += chunk.length) {
    if (!out.write(chunk)) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
}

/** Streams a multipart upload from disk and answers with the status and JSON body. */
function upload(url, filePath, fileBytes, apiKey) {
  const form = new FormData();
  form.append('tax_year', '2025');
  form.append('file', createReadStream(filePath), { filename: 'big-scan.pdf', contentType: 'application/pdf', knownLength: fileBytes });
  return new Promise((resolve, reject) => {
    const headers = { ...form.getHeaders(), 'content-length': form.getLengthSync() };
    if (apiKey) headers.authorization = `Bearer ${apiKey}`;
    const req = request(url, { method: 'POST', headers }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (chunk) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode, body }));
    });
    req.on('error', reject);
    form.pipe(req);
  });
}

/** Peak RSS growth of `pid` over its RSS just before `work` started. */
async function peakGrowthDuring(pid, work) {
  await sleep(200);
  const baseline = rssBytes(pid);
  let peak = baseline;
  const sampler = setInterval(() => (peak = Math.max(peak, rssBytes(pid))), SAMPLE_EVERY_MS);
  try {
    const result = await work();
    peak = Math.max(peak, rssBytes(pid));
    return { result, growth: peak - baseline, baseline };
  } finally {
    clearInterval(sampler);
  }
}

async function createAccount(baseUrl, apiKey) {
  const response = await fetch(`${baseUrl}/accounts`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ email: `bench-${process.pid}@example.com`, first_name: 'Bench', last_name: 'Upload' }),
  });
  if (response.status !== 201) throw new Error(`account creation answered ${response.status}: ${await response.text()}`);
  return (await response.json()).id;
}

function fullKeyWithAllPermissions(keys) {
  const usable = keys.find((key) => key.expires_at === null && key.permissions.includes('documents:write') && key.permissions.includes('accounts:write'));
  if (!usable) throw new Error('the demo data has no key that may create accounts and upload documents');
  return usable.key;
}

const workDir = mkdtempSync(join(tmpdir(), 'taxprep-upload-bench-'));
try {
  const bigFile = join(workDir, 'big.pdf');
  const smallFile = join(workDir, 'small.pdf');
  await writeFileOfSize(bigFile, FILE_BYTES);
  await writeFileOfSize(smallFile, MB);

  const mock = await startServer([
    'bin/taxprep.cjs', 'serve', '--mock', '--port', '0', '--json', '--max-upload-size', '256mb', '--rate-limit', 'off',
  ]);
  let mockSmall;
  let mockBig;
  try {
    const apiKey = fullKeyWithAllPermissions(mock.started.keys);
    const accountId = await createAccount(mock.started.base_url, apiKey);
    const url = `${mock.started.base_url}/accounts/${accountId}/documents`;
    mockSmall = await peakGrowthDuring(mock.child.pid, () => upload(url, smallFile, MB, apiKey));
    mockBig = await peakGrowthDuring(mock.child.pid, () => upload(url, bigFile, FILE_BYTES, apiKey));
    for (const { result } of [mockSmall, mockBig]) {
      if (result.status !== 201) throw new Error(`upload answered ${result.status}: ${result.body}`);
    }
    const stored = JSON.parse(mockBig.result.body);
    if (stored.file_size !== FILE_BYTES) throw new Error(`stored ${stored.file_size} bytes, sent ${FILE_BYTES}`);
  } finally {
    await stopServer(mock.child);
  }

  const bare = await startServer(['-e', BARE_SERVER, workDir]);
  let bareBig;
  try {
    bareBig = await peakGrowthDuring(bare.child.pid, () => upload(`${bare.started.base_url}/upload`, bigFile, FILE_BYTES));
  } finally {
    await stopServer(bare.child);
  }

  const mb = (bytes) => (bytes / MB).toFixed(1);
  const rows = [
    ['bare node:http, 200 MB piped to a file', mb(bareBig.baseline), mb(bareBig.growth)],
    ['taxprep mock, 1 MB upload', mb(mockSmall.baseline), mb(mockSmall.growth)],
    ['taxprep mock, 200 MB upload', mb(mockBig.baseline), mb(mockBig.growth)],
  ];
  console.log('| server and upload | RSS before (MB) | peak RSS growth (MB) |');
  console.log('|---|---:|---:|');
  for (const row of rows) console.log(`| ${row.join(' | ')} |`);
  const passed = mockBig.growth < TARGET_GROWTH_MB * MB;
  const difference = mockBig.growth - bareBig.growth;
  console.log(
    `\nmock growth for 200 MB: ${mb(mockBig.growth)} MB (target < ${TARGET_GROWTH_MB} MB: ${passed ? 'met' : 'MISSED'}); ` +
      `${mb(Math.abs(difference))} MB ${difference >= 0 ? 'above' : 'below'} the bare node:http baseline in this run.`,
  );
  process.exitCode = passed ? 0 : 1;
} finally {
  rmSync(workDir, { recursive: true, force: true });
}
