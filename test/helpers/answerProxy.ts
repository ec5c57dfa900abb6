import { once } from 'node:events';
import { createServer, request as forward, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { brotliCompressSync, constants, deflateRawSync, deflateSync, gzipSync } from 'node:zlib';

/**
 * A proxy in front of another server (the contract-minimal one) that changes its answers the way a
 * server or proxy we did not write may, chosen by the first segment of the path, which it removes
 * before forwarding (`{origin}/gzip/v1beta/accounts/2001` asks upstream for `/v1beta/accounts/2001`):
 * - `gzip`, `deflate`, `br`, `gzip-br` (`Content-Encoding: gzip, br`): coded whether asked or not;
 *   `raw-deflate`: raw DEFLATE labelled `deflate`, as some servers send it;
 * - `asked`: gzip only when the request's Accept-Encoding names it;
 * - `zstd`: labelled with a coding taxprep does not decode; `broken`: labelled gzip, not gzip;
 * - `bomb`: a brotli answer of under 1 KB that inflates to 100 MB, whatever was asked;
 * - `echo-key`: every string in the answer, and a header, repeat the request's bearer key written
 *   plainly, percent-encoded, as JSON `\u` escapes, and half plain half escaped.
 */
export type AnswerVariant = 'gzip' | 'deflate' | 'raw-deflate' | 'br' | 'gzip-br' | 'asked' | 'zstd' | 'broken' | 'bomb' | 'echo-key';

export interface AnswerProxy {
  baseUrl(variant: AnswerVariant): string;
  /** The Accept-Encoding of each request, in order. */
  acceptEncodings: Array<string | undefined>;
  close(): Promise<void>;
}

const BOMB_BYTES = 100 * 1024 * 1024;

export async function startAnswerProxy(upstreamOrigin: string): Promise<AnswerProxy> {
  const upstream = new URL(upstreamOrigin);
  let bomb: Buffer | undefined;
  const acceptEncodings: AnswerProxy['acceptEncodings'] = [];
  const server = createServer((request, response) => {
    const [, variant = '', ...rest] = (request.url ?? '/').split('/');
    acceptEncodings.push(request.headers['accept-encoding']);
    const headers: IncomingHttpHeaders = { ...request.headers, host: upstream.host };
    delete headers['accept-encoding'];
    const upstreamRequest = forward({ host: upstream.hostname, port: upstream.port, method: request.method, path: `/${rest.join('/')}`, headers }, async (answer) => {
      const chunks: Buffer[] = [];
      for await (const chunk of answer) chunks.push(chunk as Buffer);
      let body: Buffer = Buffer.concat(chunks);
      const out: Record<string, string> = { 'content-type': answer.headers['content-type'] ?? 'application/json' };
      const key = /^Bearer (.*)$/.exec(request.headers.authorization ?? '')?.[1] ?? '';
      switch (variant) {
        case 'echo-key': {
          const forms = keyForms(key);
          out['x-request-key'] = `${forms.plain} ${forms.percent}`;
          body = Buffer.from(echoKey(body.toString('utf8'), forms));
          break;
        }
        case 'asked':
          if (/\bgzip\b/.test(request.headers['accept-encoding'] ?? '')) [body, out['content-encoding']] = [gzipSync(body), 'gzip'];
          break;
        case 'bomb':
          bomb ??= brotliCompressSync(Buffer.alloc(BOMB_BYTES, '0'), { params: { [constants.BROTLI_PARAM_QUALITY]: 5 } });
          [body, out['content-encoding']] = [bomb, 'br'];
          break;
        default:
          [body, out['content-encoding']] = code(variant, body);
      }
      response.writeHead(answer.statusCode ?? 502, { ...out, 'content-length': String(body.length) });
      response.end(body);
    });
    upstreamRequest.on('error', () => response.destroy());
    request.pipe(upstreamRequest);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    baseUrl: (variant) => `${origin}/${variant}/v1beta`,
    acceptEncodings,
    async close() {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}

function code(variant: string, body: Buffer): [Buffer, string] {
  switch (variant) {
    case 'gzip':
      return [gzipSync(body), 'gzip'];
    case 'deflate':
      return [deflateSync(body), 'deflate'];
    case 'raw-deflate':
      return [deflateRawSync(body), 'deflate'];
    case 'br':
      return [brotliCompressSync(body), 'br'];
    case 'gzip-br':
      return [brotliCompressSync(gzipSync(body)), 'gzip, br'];
    case 'zstd':
      return [gzipSync(body), 'zstd'];
    case 'broken':
      return [Buffer.from('this is not gzip at all'), 'gzip'];
    default:
      throw new Error(`unknown variant ${variant}`);
  }
}

interface KeyForms {
  plain: string;
  percent: string;
  /** As it stands inside JSON text: every character a `\u00XX` escape. */
  escaped: string;
  halfEscaped: string;
}

function keyForms(key: string): KeyForms {
  const hex = (character: string) => character.charCodeAt(0).toString(16).padStart(2, '0');
  const escape = (text: string) => [...text].map((character) => `\\u00${hex(character)}`).join('');
  const half = Math.floor(key.length / 2);
  return {
    plain: key,
    percent: [...key].map((character) => `%${hex(character).toUpperCase()}`).join(''),
    escaped: escape(key),
    halfEscaped: key.slice(0, half) + escape(key.slice(half)),
  };
}

const PLACEHOLDER = '@@KEY@@';

/** Every string of the JSON document (keys of objects aside) with the key appended in each form. */
function echoKey(text: string, forms: KeyForms): string {
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch {
    return `${text} ${forms.plain}`;
  }
  const visit = (value: unknown): unknown => {
    if (typeof value === 'string') return `${value} ${PLACEHOLDER}`;
    if (Array.isArray(value)) return value.map(visit);
    if (value === null || typeof value !== 'object') return value;
    return Object.fromEntries(Object.entries(value).map(([name, item]) => [name, visit(item)]));
  };
  const all = `Bearer ${forms.plain} ${forms.percent} ${forms.escaped} ${forms.halfEscaped}`;
  return JSON.stringify(visit(document)).replaceAll(PLACEHOLDER, all);
}
