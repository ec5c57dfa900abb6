import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A second implementation of the service, written in plain node:http and sharing nothing with our
 * mock: it answers with the contract's minimum shapes and the variants the contract allows, so that
 * the client is tested against what the contract promises rather than what our mock happens to send.
 *
 * `{origin}/v1beta` answers with the minimum: an upload answers `{"id": N}` only, ids are strings
 * where the contract's samples show both, optional fields are null, fields the contract does not
 * name are added, `"spouse": null`, and the filters the contract does not name are called
 * `project_type` / `project_status` (projects) and `account` / `type` (deliverables), so taxprep's
 * default names are ignored (`options.names` renames them, and the deliverable list's offset).
 * Options choose what the contract leaves open, as another service would: upload rules of its own
 * (`uploadRules`: a size limit and a type list, refused in its own words), a long deliverable list
 * (`deliverables`), an offset it ignores (`ignoreOffset`); `requests` logs what was asked.
 * Other prefixes hold the hostile and broken variants:
 * - `/endless/v1beta`: `has_more: true` for ever (new ids each page), an endless body for an account;
 * - `/repeat/v1beta`: the same deliverables page again and again, `has_more: true`;
 * - `/hostile/v1beta`: error text with ANSI escapes and bidi overrides, an HTML 502;
 * - `/slow/v1beta`: an upload of a file named `*hang*` is never answered (for Ctrl-C);
 * - anything else: the foreign 404 of a web server (HTML).
 */

export const MINIMAL_KEY = 'live_4f9a8b7c6d5e4f3a2b1c0d9e';
export const ESC = '\u001b';
export const RLO = '\u202e';
const HOSTILE = `${ESC}[2J${ESC}]0;pwned\u0007bad ${RLO}txt.exe${ESC}[31m`;

export interface MinimalServer {
  origin: string;
  /** Requests received, in order: method and path with its query (`GET /v1beta/deliverables?limit=100`). */
  requests: string[];
  /** `{origin}{variant}/v1beta`; '' is the minimal variant. */
  baseUrl(variant?: '' | 'endless' | 'repeat' | 'hostile' | 'slow'): string;
  /** Uploads received, in order: the file part's name and byte count. */
  uploads: Array<{ filename: string; bytes: number }>;
  /** Resolves when an upload to `/slow/` of a file named `*hang*` has arrived (it is never answered). */
  hanging: Promise<void>;
  close(): Promise<void>;
}

type Handler = (request: IncomingMessage, url: URL, send: Send) => Promise<void> | void;
type Send = (status: number, body: unknown, headers?: Record<string, string>) => void;

const PROJECTS = [
  { id: '501', type: 'tax_return', tax_year: 2024, status: 'in_progress', progress_percentage: 40, created_at: '2025-02-01T00:00:00Z', estimated_completion: null },
  { id: '502', type: 'tax_planning', tax_year: 2025, status: 'completed', progress_percentage: 100, created_at: '2025-03-01T00:00:00Z', estimated_completion: null },
];
const DELIVERABLES = [
  { id: '901', project_id: '501', account_id: '2001', title: 'Return 2024', project_type: 'tax_return', status: 'draft', score: 7 },
  { id: '902', project_id: '502', account_id: '2002', title: 'Plan 2025', project_type: 'tax_planning', status: 'delivered' },
];

/**
 * The query parameter names the server honours for the five the contract does not name (the keys
 * are taxprep's settings keys); by default not taxprep's own defaults, except the offset.
 */
export interface MinimalNames {
  'projects.type': string;
  'projects.status': string;
  'deliverables.account_id': string;
  'deliverables.project_type': string;
  'deliverables.offset': string;
}
export const MINIMAL_NAMES: MinimalNames = {
  'projects.type': 'project_type',
  'projects.status': 'project_status',
  'deliverables.account_id': 'account',
  'deliverables.project_type': 'type',
  'deliverables.offset': 'offset',
};

export interface MinimalServerOptions {
  names?: Partial<MinimalNames>;
  /** Added to the `Date` header of every answer: a service whose clock is off. */
  dateOffsetMs?: number;
  /**
   * Upload rules of this service, in its own words (not the mock's): a file over `maxBytes` gets
   * 413 `FILE_TOO_LARGE` with `details.max_file_size`; a file whose part's media type is not in
   * `types` gets 400 `INVALID_FILE_TYPE` with `details.allowed_types`. Without them any file is taken.
   */
  uploadRules?: { maxBytes?: number; types?: string[] };
  /** The deliverable list holds this many (ids 3001...), instead of the two of the minimal variant. */
  deliverables?: number;
  /** The deliverable list ignores every offset: each page is the first. */
  ignoreOffset?: boolean;
}

export async function startContractMinimalServer(options: MinimalServerOptions = {}): Promise<MinimalServer> {
  const names = { ...MINIMAL_NAMES, ...options.names };
  const requests: string[] = [];
  const deliverables =
    options.deliverables === undefined
      ? DELIVERABLES
      : Array.from({ length: options.deliverables }, (_, index) => ({ id: String(3001 + index), project_id: '501', account_id: '2001', title: `Item ${index + 1}`, project_type: 'tax_return', status: 'draft' }));
  const uploads: MinimalServer['uploads'] = [];
  let arrivedHanging!: () => void;
  const hanging = new Promise<void>((resolve) => {
    arrivedHanging = resolve;
  });
  let endlessPages = 0;

  const routes: Array<[string, RegExp, Handler]> = [
    ['GET', /^\/health$/, (_r, _u, send) => send(200, { status: 'ok', timestamp: '2026-11-23T10:00:00Z', region: 'eu' })],
    [
      'POST',
      /^\/accounts$/,
      async (request, _u, send) => {
        const body = JSON.parse(await text(request)) as Record<string, unknown>;
        send(201, {
          id: '2001',
          email: body.email,
          first_name: body.first_name,
          last_name: body.last_name,
          status: 'active',
          login_link: 'https://app.example/auth/partner-login/tok2001',
          login_link_expires_at: '2026-11-30T10:00:00Z',
          created_at: '2026-11-23T10:00:00Z',
          spouse: null,
          partner_reference: { crm: 'X-1' },
        });
      },
    ],
    ['GET', /^\/accounts\/2001$/, (_r, _u, send) => send(200, { id: '2001', email: 'ada@example.com', first_name: null, last_name: 'Lovelace', status: 'active', tier: 'gold' })],
    [
      'POST',
      /^\/accounts\/2001\/login-link$/,
      async (request, _u, send) => {
        await text(request);
        send(201, { login_link: 'https://app.example/auth/partner-login/tokL', user_email: 'ada@example.com', expires_at: '2026-11-30T10:00:00Z', account_id: '2001' });
      },
    ],
    [
      'POST',
      /^\/accounts\/\d+\/documents$/,
      async (request, url, send) => {
        const part = await fileOfUpload(request);
        if (url.pathname.startsWith('/slow/') && part.filename.includes('hang')) {
          arrivedHanging();
          return; // never answered
        }
        const rules = options.uploadRules ?? {};
        if (rules.maxBytes !== undefined && part.bytes > rules.maxBytes) {
          return send(413, { error: { code: 'FILE_TOO_LARGE', message: 'File exceeds the maximum size', details: { max_file_size: rules.maxBytes, received: part.bytes } } });
        }
        if (rules.types !== undefined && !rules.types.includes(part.contentType)) {
          return send(400, { error: { code: 'INVALID_FILE_TYPE', message: `File type ${part.contentType} is not allowed`, details: { allowed_types: rules.types } } });
        }
        uploads.push({ filename: part.filename, bytes: part.bytes });
        send(201, { id: url.pathname.includes('/2002/') ? 7999 : 7000 + uploads.length });
      },
    ],
    [
      'GET',
      /^\/accounts\/2001\/documents$/,
      (_r, _u, send) =>
        send(200, {
          documents: [
            { id: '7001', filename: 'w2.pdf', tax_year: null, description: null, uploaded_at: '2026-11-20T10:00:00Z' },
            { id: '7002', filename: 'odd.pdf', tax_year: 'twenty-four', description: 'year as text', uploaded_at: '2026-11-21T10:00:00Z' },
          ],
          total_count: 2,
          has_more: false,
        }),
    ],
    // The contract's minimum of a list: the array alone.
    ['GET', /^\/accounts\/2002\/documents$/, (_r, _u, send) => send(200, { documents: [] })],
    // A list answered badly (a proxy's page with 200), while uploads to the account work.
    ['GET', /^\/accounts\/2003\/documents$/, (_r, _u, send) => send(200, '<html><body>Service Unavailable</body></html>', { 'content-type': 'text/html' })],
    ['GET', /^\/documents\/7999$/, (_r, _u, send) => send(404, { error: { code: 'DOCUMENT_NOT_FOUND', message: 'no such document' } })],
    [
      'GET',
      /^\/documents\/\d+$/,
      (_r, url, send) =>
        send(200, { id: url.pathname.split('/').pop(), account_id: '2001', filename: 'stored.pdf', tax_year: 2024, description: '', file_size: 0, file_type: 'application/pdf', uploaded_at: '2026-11-23T10:00:00Z', checksum: 'abc' }),
    ],
    [
      'GET',
      /^\/accounts\/2001\/projects$/,
      (_r, url, send) => {
        const type = url.searchParams.get(names['projects.type']);
        const status = url.searchParams.get(names['projects.status']);
        const projects = PROJECTS.filter((p) => (type === null || p.type === type) && (status === null || p.status === status));
        send(200, { projects, total_count: projects.length });
      },
    ],
    ['GET', /^\/projects\/501\/status$/, (_r, _u, send) => send(200, { id: '501', status: 'in_progress', progress_percentage: 40, outstanding_items: null, last_updated: null })],
    ['GET', /^\/projects\/501\/deliverable$/, (_r, _u, send) => send(200, { deliverable_id: '901', title: 'Return 2024', status: 'draft', view_link: 'https://app.example/view/901', summary: null })],
    [
      'GET',
      /^\/deliverables$/,
      (_r, url, send) => {
        const account = url.searchParams.get(names['deliverables.account_id']);
        const type = url.searchParams.get(names['deliverables.project_type']);
        const status = url.searchParams.get('status');
        const offset = options.ignoreOffset ? 0 : Number(url.searchParams.get(names['deliverables.offset']) ?? 0);
        const limit = Number(url.searchParams.get('limit') ?? 50);
        const matching = deliverables.filter((d) => (account === null || d.account_id === account) && (type === null || d.project_type === type) && (status === null || d.status === status));
        send(200, { deliverables: matching.slice(offset, offset + limit), total_count: matching.length, has_more: offset + limit < matching.length });
      },
    ],
    ['POST', /^\/echo$/, async (request, _u, send) => send(200, { received: JSON.parse(await text(request)) as unknown })],
  ];

  const variants: Record<string, Array<[string, RegExp, Handler]>> = {
    endless: [
      [
        'GET',
        /^\/deliverables$/,
        (_r, url, send) => {
          endlessPages += 1;
          const offset = Number(url.searchParams.get('offset') ?? 0);
          send(200, { deliverables: [{ id: 100_000 + offset, title: `page ${endlessPages}` }], has_more: true });
        },
      ],
      [
        'GET',
        /^\/accounts\/\d+$/,
        (_r, _u, _send) => {
          throw new EndlessBody();
        },
      ],
    ],
    repeat: [['GET', /^\/deliverables$/, (_r, _u, send) => send(200, { deliverables: [{ id: 1 }, { id: 2 }], total_count: 1000, has_more: true })]],
    hostile: [
      ['GET', /^\/accounts\/\d+$/, (_r, _u, send) => send(400, { error: { code: 'INVALID_PARAMETERS', message: `account ${HOSTILE}`, details: { account_id: [`must be ${HOSTILE}`] } } })],
      ['GET', /^\/documents\/\d+$/, (_r, _u, send) => send(502, `<html><head><title>502 Bad Gateway ${HOSTILE}</title></head><body>upstream down</body></html>`, { 'content-type': 'text/html' })],
      ['GET', /^\/deliverables$/, (_r, _u, send) => send(200, { deliverables: [{ id: 1, title: `Plan ${HOSTILE}`, status: 'draft' }], total_count: 1, has_more: false })],
    ],
  };

  const server = createServer((request, response) => {
    void handle(request, response).catch((error: unknown) => {
      if (error instanceof EndlessBody) return streamForever(response);
      response.destroy();
    });
  });

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const url = new URL(request.url ?? '/', 'http://localhost');
    requests.push(`${request.method} ${url.pathname}${url.search}`);
    const match = /^\/(?:(endless|repeat|hostile|slow)\/)?v1beta(\/.*)$/.exec(url.pathname);
    const send: Send = (status, body, headers = {}) => {
      const payload = typeof body === 'string' ? body : JSON.stringify(body);
      const date = options.dateOffsetMs === undefined ? {} : { date: new Date(Date.now() + options.dateOffsetMs).toUTCString() };
      response.writeHead(status, { 'content-type': 'application/json', ...date, ...headers });
      response.end(payload);
    };
    if (match === null) {
      await text(request);
      return send(404, '<!DOCTYPE html><html><body><h1>Not Found</h1><p>nginx</p></body></html>', { 'content-type': 'text/html' });
    }
    const [, variant, path] = match as unknown as [string, string | undefined, string];
    if (path !== '/health' && request.headers.authorization !== `Bearer ${MINIMAL_KEY}`) {
      await text(request);
      return send(401, { error: { code: 'INVALID_API_KEY', message: 'Invalid API key', details: { hint: 'Keys begin with live_' } } });
    }
    const table = [...(variant === undefined || variant === 'slow' ? [] : variants[variant]!), ...routes];
    const route = table.find(([method, pattern]) => method === request.method && pattern.test(path));
    if (route === undefined) {
      await text(request);
      return send(404, { error: { code: 'NOT_FOUND', message: 'No such record' } });
    }
    await route[2](request, url, send);
  }

  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    baseUrl: (variant = '') => `${origin}${variant === '' ? '' : `/${variant}`}/v1beta`,
    requests,
    uploads,
    hanging,
    async close() {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}

class EndlessBody extends Error {}

/** A 200 whose body never ends, until the client hangs up. */
function streamForever(response: ServerResponse): void {
  response.writeHead(200, { 'content-type': 'application/json' });
  response.write('{"id": 1, "padding": "');
  const chunk = 'x'.repeat(64 * 1024);
  const pump = () => {
    while (!response.destroyed && response.write(chunk));
    if (!response.destroyed) response.once('drain', pump);
  };
  pump();
}

/**
 * The file part of a multipart upload, read as it streams (a 120 MB file is never held): its name
 * and media type from the first bytes, its size from the whole count. taxprep sends the file last,
 * so the part ends where the closing boundary begins.
 */
async function fileOfUpload(request: IncomingMessage): Promise<{ filename: string; contentType: string; bytes: number }> {
  const boundary = /boundary=([^;]+)/.exec(request.headers['content-type'] ?? '')?.[1] ?? '';
  const closing = Buffer.byteLength(`\r\n--${boundary}--\r\n`);
  let head = Buffer.alloc(0);
  let total = 0;
  for await (const chunk of request) {
    const bytes = chunk as Buffer;
    if (head.length < 16 * 1024) head = Buffer.concat([head, bytes.subarray(0, 16 * 1024 - head.length)]);
    total += bytes.length;
  }
  const text = head.toString('latin1');
  const partStart = text.indexOf('name="file"');
  const headerEnd = text.indexOf('\r\n\r\n', partStart);
  const headers = partStart < 0 || headerEnd < 0 ? '' : text.slice(partStart, headerEnd);
  return {
    filename: /filename="([^"]*)"/.exec(headers)?.[1] ?? '',
    contentType: /content-type:\s*([^\r\n;]+)/i.exec(headers)?.[1]?.trim().toLowerCase() ?? '',
    bytes: headerEnd < 0 ? -1 : total - (headerEnd + 4) - closing,
  };
}

async function text(request: IncomingMessage, encoding: BufferEncoding = 'utf8'): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString(encoding);
}
