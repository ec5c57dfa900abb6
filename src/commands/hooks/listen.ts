import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { UsageError, EXIT } from '../../errors';
import { sentenceOf } from '../../hooks/events';
import { isSecret, verificationProblem } from '../../hooks/sign';
import { createOutput } from '../../output';
import { sanitizeLine } from '../../output/sanitize';
import type { Context } from '../../types';
import type { RawInvocation } from '../types';

export const DEFAULT_LISTEN_PORT = 8788;
const MAX_BODY_BYTES = 1024 * 1024;

export interface ListenOptions {
  port: number;
  secretFile: string | undefined;
}

export function parseOptions(raw: RawInvocation): ListenOptions {
  const text = typeof raw.flags.port === 'string' ? raw.flags.port : String(DEFAULT_LISTEN_PORT);
  const port = /^\d{1,5}$/.test(text) ? Number(text) : NaN;
  if (!(port >= 0 && port <= 65535)) throw new UsageError(`--port "${text}" must be a port number from 0 to 65535 (0: any free port)`, { details: { '--port': ['must be 0 to 65535'] } });
  return { port, secretFile: typeof raw.flags.secretFile === 'string' ? raw.flags.secretFile : undefined };
}

/** The secrets to verify with: the file's lines (`hooks show --secret` prints one, two during a rotation), else TAXPREP_WEBHOOK_SECRET. */
async function secretsOf(ctx: Context, file: string | undefined): Promise<string[]> {
  let text: string | undefined = ctx.env.TAXPREP_WEBHOOK_SECRET;
  if (file !== undefined) {
    text = await readFile(file, 'utf8').catch((error: NodeJS.ErrnoException) => {
      throw new UsageError(`--secret-file ${file} cannot be read (${error.code ?? error.message})`, { details: { '--secret-file': ['must be a readable file'] } });
    });
  }
  const secrets = (text ?? '').split(/\s+/).filter((line) => line !== '');
  if (secrets.length === 0 || !secrets.every(isSecret)) {
    throw new UsageError('hooks listen needs the hook\'s secret to verify signatures: --secret-file F holding whsec_ secrets, one a line (or TAXPREP_WEBHOOK_SECRET)', {
      details: { '--secret-file': ['must hold whsec_ secrets of 24 bytes or more'] },
      hint: 'taxprep hooks show <hook> --secret > hook.secret && taxprep hooks listen --secret-file hook.secret',
    });
  }
  return secrets;
}

/**
 * `taxprep hooks listen`: a receiver on 127.0.0.1 for trying hooks (and for the demo). It verifies
 * each request as a Standard Webhooks receiver does, answers 204 (or 401 when the signature does
 * not verify), and prints each verified event: a line on a terminal, the body under --json.
 */
export async function run(ctx: Context, options: ListenOptions): Promise<number> {
  const secrets = await secretsOf(ctx, options.secretFile);
  const out = createOutput(ctx);
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) chunks.push(chunk);
    });
    request.on('end', () => {
      void (async () => {
        const body = Buffer.concat(chunks).toString('utf8');
        const headers = Object.fromEntries(Object.entries(request.headers).map(([name, value]) => [name, Array.isArray(value) ? value.join(', ') : value]));
        const nowSeconds = Math.floor(Date.now() / 1000);
        const problems = secrets.map((secret) => verificationProblem(secret, headers, body, nowSeconds));
        if (size > MAX_BODY_BYTES || problems.every((problem) => problem !== undefined)) {
          response.writeHead(401).end();
          await out.note(`hooks listen: refused ${request.method} ${sanitizeLine(request.url ?? '')}: ${size > MAX_BODY_BYTES ? 'body too large' : problems[0]}`);
          return;
        }
        response.writeHead(204).end();
        let event: { type?: unknown; data?: Record<string, unknown> } = {};
        try {
          event = JSON.parse(body) as typeof event;
        } catch {
          // A --format text hook's body, or anything else: printed as it came.
        }
        const type = typeof event.type === 'string' ? event.type : '(no type)';
        if (ctx.globals.json) await out.ndjson({ webhook_id: headers['webhook-id'], verified: true, body: event });
        else ctx.io.stdout.write(`verified ${sanitizeLine(String(headers['webhook-id']))} ${sanitizeLine(type)}: ${sanitizeLine(event.data === undefined ? body : sentenceOf(type, event.data))}\n`);
      })();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) =>
      reject(new UsageError(`hooks listen cannot listen on 127.0.0.1:${options.port} (${error.code ?? error.message})`, { details: { '--port': ['must be free'] } })),
    );
    server.listen(options.port, '127.0.0.1', resolve);
  });
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : options.port;
  await out.note(`hooks listen: receiving on http://127.0.0.1:${port}/ (Ctrl-C to stop)`);
  const signal = ctx.interrupted();
  await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return EXIT.INTERRUPTED;
}
