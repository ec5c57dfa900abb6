import type * as Http2 from 'node:http2';

/**
 * What the bundle gives undici in place of `node:http2` (see bin/build.js). undici's HTTP/1.1
 * client loads its HTTP/2 client, which loads `node:http2` and with it `node:tls`: about a tenth
 * of a `taxprep health` run, for a protocol taxprep never asks for (undici speaks HTTP/2 only when
 * `allowH2` is set). undici reads these constants when it loads; `node:http2` itself is loaded
 * only if a session is ever opened. test/api/http2OnDemand.test.ts checks the values against Node's.
 */
export const constants = {
  HTTP2_HEADER_AUTHORITY: ':authority',
  HTTP2_HEADER_METHOD: ':method',
  HTTP2_HEADER_PATH: ':path',
  HTTP2_HEADER_SCHEME: ':scheme',
  HTTP2_HEADER_CONTENT_LENGTH: 'content-length',
  HTTP2_HEADER_EXPECT: 'expect',
  HTTP2_HEADER_STATUS: ':status',
  HTTP2_HEADER_PROTOCOL: ':protocol',
  NGHTTP2_REFUSED_STREAM: 7,
  NGHTTP2_CANCEL: 8,
} as const;

let http2: typeof Http2 | undefined;

export function connect(...args: Parameters<typeof Http2.connect>): Http2.ClientHttp2Session {
  http2 ??= process.getBuiltinModule('node:http2');
  return http2.connect(...args);
}
