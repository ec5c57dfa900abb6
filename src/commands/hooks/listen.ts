import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { UsageError, EXIT } from '../../errors';
import { sentenceOf } from '../../hooks/events';
import { isSecret, verificationProblem } from '../../hooks/sign';
import { createOutput } from '../../output';
import { sanitizeLine } from '../../output/sanitize';
import { untilStopSignal } from '../../lib/stopSignal';
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

/** How a request is answered: 204 and its body when it verifies, else the status and why. */
type Verdict = { status: 204; body: unknown } | { status: 400 | 401 | 413; why: string };

/** Checks one request as a Standard Webhooks receiver does: the signature against each live secret, then a JSON body. */
function verdictOf(secrets: string[], headers: Record<string, string | undefined>, text: string, size: number, nowSeconds: number): Verdict {
  if (size > MAX_BODY_BYTES) return { status: 413, why: 'the body is larger than 1 MiB' };
  const problems = secrets.map((secret) => verificationProblem(secret, headers, text, nowSeconds));
  if (problems.every((problem) => problem !== undefined)) return { status: 401, why: problems[0]! };
  try {
    return { status: 204, body: JSON.parse(text) as unknown };
  } catch {
    return { status: 400, why: 'the body is not JSON (a Standard Webhooks body is a JSON document)' };
  }
}

/** A verified request as a line: its id, its event type and a sentence, or the body as it came when it holds no change (a `--format text` body). */
function lineOf(id: string, body: unknown, text: string): string {
  const event = typeof body === 'object' && body !== null ? (body as { type?: unknown; data?: unknown }) : {};
  const type = typeof event.type === 'string' ? event.type : '(no type)';
  const said = typeof event.data === 'object' && event.data !== null ? sentenceOf(type, event.data as Record<string, unknown>) : text;
  return `verified ${sanitizeLine(id)} ${sanitizeLine(type)}: ${sanitizeLine(said)}\n`;
}

/**
 * `taxprep hooks listen`: a receiver on 127.0.0.1 for trying hooks (and for the demo). It answers
 * each request as a Standard Webhooks receiver does: 204 when it verifies, 401 when the signature,
 * the timestamp or a header is wrong, 400 when the body is not JSON, 413 past 1 MiB (each refusal
 * said on stderr); it prints each verified event, a line of text or, under --json, its id and body.
 * Being stopped (Ctrl-C or SIGTERM) is how it ends: exit 0, with a count of what it answered.
 */
export async function run(ctx: Context, options: ListenOptions): Promise<number> {
  const secrets = await secretsOf(ctx, options.secretFile);
  const out = createOutput(ctx);
  const counts = { verified: 0, refused: 0 };
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) chunks.push(chunk);
    });
    request.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const headers = Object.fromEntries(Object.entries(request.headers).map(([name, value]) => [name, Array.isArray(value) ? value.join(', ') : value]));
      const verdict = verdictOf(secrets, headers, text, size, Math.floor(Date.now() / 1000));
      response.writeHead(verdict.status).end();
      if (verdict.status !== 204) {
        counts.refused += 1;
        void out.note(`hooks listen: refused ${request.method} ${sanitizeLine(request.url ?? '')}: ${verdict.why}`);
        return;
      }
      counts.verified += 1;
      const id = headers['webhook-id']!;
      if (ctx.globals.json) void out.ndjson({ webhook_id: id, verified: true, body: verdict.body }).catch(() => undefined);
      else ctx.io.stdout.write(lineOf(id, verdict.body, text));
    });
  });
  // Listening for signals before announcing the receiver: a script may stop it the moment it reads the line.
  const stopRequested = untilStopSignal();
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) =>
      reject(new UsageError(`hooks listen cannot listen on 127.0.0.1:${options.port} (${error.code ?? error.message})`, { details: { '--port': ['must be free'] } })),
    );
    server.listen(options.port, '127.0.0.1', resolve);
  });
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : options.port;
  await out.note(`hooks listen: receiving on http://127.0.0.1:${port}/ (Ctrl-C to stop)`);
  await stopRequested;
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await out.note(`hooks listen: stopped; ${counts.verified} request${counts.verified === 1 ? '' : 's'} verified, ${counts.refused} refused.`);
  return EXIT.OK;
}
