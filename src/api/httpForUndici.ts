/**
 * What the bundle gives undici in place of `node:http` (see bin/build.js). undici loads it for two
 * values, and with it Node's HTTP client and server: about 8 ms of every API command.
 * - `IncomingMessage`: before destroying a stream undici detaches its socket when the stream is an
 *   incoming HTTP message; taxprep hands undici its own request bodies (strings and PassThrough
 *   streams) and undici its sockets, never one, so no stream is of this class.
 * - `maxHeaderSize`: the default limit of an answer's headers, Node's 16 KiB (Node's
 *   `--max-http-header-size` no longer changes it). test/api/httpForUndici.test.ts checks it.
 */
export class IncomingMessage {}

export const maxHeaderSize = 16 * 1024;
