import type {} from '@fastify/multipart';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { DOCUMENT_MEDIA_TYPES, addFieldError, isAcceptedDocumentMediaType, mediaTypeEssence, safeDocumentFilename, type FieldErrors } from '../contract';
import { BlobTooLargeError, type MockDeps } from './deps';
import { MockError } from './errors';

/**
 * Receives the multipart upload of a document. The file is streamed into the blob store as it
 * arrives (never held whole in memory); text fields may come before or after it, so they are
 * collected and validated by the caller once the whole form has been read. On any failure the
 * blob written so far is removed: a rejected upload leaves nothing behind. The router has already
 * refused any body that is not multipart/form-data.
 */

export interface ReceivedFile {
  blob: string;
  size: number;
  filename: string;
  mediaType: string;
}

export interface ReceivedForm {
  /** Text fields by name (a map without a prototype: the names are the sender's); a name sent twice is reported in `errors` instead. */
  fields: Record<string, string>;
  errors: FieldErrors;
  file: ReceivedFile | undefined;
}

const FILE_FIELD = 'file';

/** Busboy limits: one file part and a handful of short text fields are all an upload needs. */
const FORM_LIMITS = { files: 1, fields: 8, fieldSize: 16 * 1024, parts: 9 } as const;

export async function receiveDocumentForm(request: FastifyRequest, reply: FastifyReply, deps: MockDeps): Promise<ReceivedForm> {
  const maxBytes = deps.settings.uploadMaxBytes;
  const form: ReceivedForm = { fields: Object.create(null) as Record<string, string>, errors: {}, file: undefined };
  try {
    // One byte over the limit reaches the blob store, which then refuses the file as too large.
    for await (const part of request.parts({ limits: { ...FORM_LIMITS, fileSize: maxBytes + 1 } })) {
      if (part.type === 'field') {
        if (part.fieldname === FILE_FIELD) addFieldError(form.errors, FILE_FIELD, 'must be a file part (with a filename), not a text field');
        else if (Object.hasOwn(form.fields, part.fieldname)) addFieldError(form.errors, part.fieldname, 'must be sent only once');
        else form.fields[part.fieldname] = String(part.value);
        continue;
      }
      if (part.fieldname !== FILE_FIELD) {
        throw validationError(part.fieldname, `is not a field of this request (send the file as "${FILE_FIELD}")`);
      }
      if (!isAcceptedDocumentMediaType(part.mimetype)) {
        throw new MockError('UNSUPPORTED_MEDIA_TYPE', `Documents of type ${mediaTypeEssence(part.mimetype)} are not accepted.`, {
          provided: part.mimetype,
          expected: [...DOCUMENT_MEDIA_TYPES],
        });
      }
      const { blob, size } = await deps.store.blobs.write(part.file, maxBytes);
      form.file = { blob, size, filename: safeDocumentFilename(part.filename), mediaType: mediaTypeEssence(part.mimetype) };
    }
    return form;
  } catch (error) {
    if (form.file) await deps.store.blobs.remove(form.file.blob);
    const refusal = asUploadError(error, maxBytes);
    // A body over the limit is not worth reading to its end: the connection closes after the answer.
    if (refusal instanceof MockError && refusal.code === 'PAYLOAD_TOO_LARGE') reply.header('connection', 'close');
    else discardRestOfBody(request, maxBytes);
    throw refusal;
  }
}

/** How long the rest of a refused upload's body may take to arrive before the connection is closed anyway. */
const LINGER_MS = 10_000;

/**
 * A lingering close, as nginx does: an upload refused before its body was read (an unknown
 * account, a file type the service does not accept, a wrong field before the file) is answered at
 * once, and the rest of its body is read and thrown away, so that the client, still writing, then
 * reads the answer. Closing at once would reset the connection under it: it would see EPIPE or
 * ECONNRESET instead of the answer. Bounded: past `maxBytes` or `LINGER_MS` the connection is
 * closed. Once the body has ended, the connection serves the client's next request.
 */
export function discardRestOfBody(request: FastifyRequest, maxBytes: number): void {
  const body = request.raw;
  if (body.complete || body.destroyed) return;
  // The form's parser, if it was reading, stops; the bytes now go nowhere.
  body.unpipe();
  let discarded = 0;
  const giveUp = () => body.socket.destroy();
  const timer = setTimeout(giveUp, LINGER_MS);
  timer.unref();
  body.on('data', (chunk: Buffer) => {
    discarded += chunk.length;
    if (discarded > maxBytes) giveUp();
  });
  body.once('close', () => clearTimeout(timer));
  body.resume();
}

function asUploadError(error: unknown, maxBytes: number): unknown {
  if (error instanceof MockError) return error;
  if (error instanceof BlobTooLargeError) return payloadTooLarge(maxBytes);
  // A failing disk is the mock's fault (500); everything else here is a malformed form.
  if (error instanceof Error && 'syscall' in error) return error;
  switch ((error as { code?: unknown }).code) {
    case 'FST_REQ_FILE_TOO_LARGE':
      return payloadTooLarge(maxBytes);
    case 'FST_FILES_LIMIT':
      return validationError(FILE_FIELD, 'must be sent only once (one file per upload)');
    case 'FST_FIELDS_LIMIT':
      return validationError('body', `must have at most ${FORM_LIMITS.fields} text fields`);
    case 'FST_PARTS_LIMIT':
      return validationError('body', `must have at most ${FORM_LIMITS.parts} parts (one file and the text fields)`);
    case 'FST_PROTO_VIOLATION':
      // Busboy's parser refuses any part named like an Object.prototype member before naming it to us.
      return validationError('body', 'has a part named like a JavaScript object member (such as "constructor" or "__proto__"), which is not a field of this request');
    default:
      return validationError('body', `is not valid multipart/form-data (${error instanceof Error ? error.message : String(error)})`);
  }
}

function payloadTooLarge(maxBytes: number): MockError {
  return new MockError('PAYLOAD_TOO_LARGE', `The file is larger than the upload limit of ${maxBytes} bytes.`, { max_bytes: maxBytes });
}

function validationError(field: string, message: string): MockError {
  return new MockError('VALIDATION_ERROR', `The upload is invalid: ${field} ${message}.`, { [field]: [message] });
}
