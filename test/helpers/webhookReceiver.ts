import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { Webhook } from 'standardwebhooks';

/** A request a receiver got: its webhook-id, its body, and whether every secret given verified it. */
export interface Received {
  id: string;
  body: string;
  verified: boolean;
}

export type ReceiverAnswer = (request: IncomingMessage, count: number) => { status: number; headers?: Record<string, string>; delayMs?: number };

/**
 * A receiver on 127.0.0.1 that verifies each request with every secret it is given (with the
 * `standardwebhooks` reference library, not taxprep's code) and answers as `answer` says; added to
 * `servers`, for the suite to close.
 */
export async function startReceiver(servers: Server[], answer: ReceiverAnswer) {
  const received: Received[] = [];
  const secrets: string[] = [];
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const headers = request.headers as Record<string, string>;
      const verified = secrets.length > 0 && secrets.every((secret) => {
        try {
          new Webhook(secret).verify(body, headers);
          return true;
        } catch {
          return false;
        }
      });
      received.push({ id: headers['webhook-id']!, body, verified });
      const reply = answer(request, received.length);
      setTimeout(() => {
        if (!response.destroyed) response.writeHead(reply.status, reply.headers).end();
      }, reply.delayMs ?? 0);
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return { url: `http://127.0.0.1:${port}/hook`, received, secrets };
}
