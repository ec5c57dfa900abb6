/**
 * Document uploads: the media types of tax paperwork and how a client's filename is stored.
 * The contract leaves the types, the size limit and the stored name "not shown": what the mock
 * accepts here is the mock's choice (docs/contract-notes.md), which the client never applies to
 * another service (src/api/uploadRules.ts).
 */

/**
 * Tax paperwork: PDFs, scans and photos, spreadsheets and word-processor files, plain text and CSV,
 * by the file extensions that carry them. The client names a file's media type from this table (any
 * other extension goes as `application/octet-stream`, and the service decides); the mock accepts
 * exactly these media types.
 */
export const DOCUMENT_MEDIA_TYPE_OF_EXTENSION = {
  '.pdf': 'application/pdf',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.png': 'image/png',
  '.heic': 'image/heic',
  '.heif': 'image/heif',
  '.tif': 'image/tiff',
  '.tiff': 'image/tiff',
  '.webp': 'image/webp',
  '.txt': 'text/plain',
  '.csv': 'text/csv',
  '.xls': 'application/vnd.ms-excel',
  '.xlsx': 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  '.doc': 'application/msword',
  '.docx': 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
} as const;

export type DocumentMediaType = (typeof DOCUMENT_MEDIA_TYPE_OF_EXTENSION)[keyof typeof DOCUMENT_MEDIA_TYPE_OF_EXTENSION];

/** The accepted media types, each once, in the table's order. */
export const DOCUMENT_MEDIA_TYPES = [...new Set(Object.values(DOCUMENT_MEDIA_TYPE_OF_EXTENSION))] as [DocumentMediaType, ...DocumentMediaType[]];

/** The media type of a file name by its extension (any case), or undefined when the table has none. */
export function documentMediaTypeOf(filename: string): DocumentMediaType | undefined {
  const extension = /\.[^./\\]*$/.exec(filename)?.[0]?.toLowerCase() ?? '';
  return Object.hasOwn(DOCUMENT_MEDIA_TYPE_OF_EXTENSION, extension) ? DOCUMENT_MEDIA_TYPE_OF_EXTENSION[extension as keyof typeof DOCUMENT_MEDIA_TYPE_OF_EXTENSION] : undefined;
}

/** The largest document the mock stores by default, 100 MiB (`serve --mock --max-upload-size` changes it); the mock says it in its 413 and /openapi.json. */
export const DOCUMENT_MAX_BYTES = 100 * 1024 * 1024;

/** The media type without parameters, lower case: `Text/Plain; charset=utf-8` -> `text/plain`. */
export function mediaTypeEssence(contentType: string): string {
  return (contentType.split(';')[0] ?? '').trim().toLowerCase();
}

/** A type as a service or a profile names it, in one form: `.PDF` -> `.pdf`, `Application/PDF` -> `application/pdf`, `pdf` -> `.pdf`; undefined when it is neither. */
export function normalType(entry: string): string | undefined {
  const text = entry.trim().toLowerCase();
  if (/^[a-z0-9!#$&^_.+-]+\/[a-z0-9!#$&^_.+-]+$/.test(text)) return mediaTypeEssence(text);
  if (/^\.?[a-z0-9][a-z0-9_+-]{0,15}$/.test(text)) return text.startsWith('.') ? text : `.${text}`;
  return undefined;
}

export function isAcceptedDocumentMediaType(contentType: string): boolean {
  return (DOCUMENT_MEDIA_TYPES as readonly string[]).includes(mediaTypeEssence(contentType));
}

export const FILENAME_MAX_CHARACTERS = 255;
export const UNNAMED_FILENAME = 'unnamed';

// C0 and C1 controls, and the invisible bidirectional controls that can disguise an extension
// (`invoice\u202Efdp.exe` shows as `invoiceexe.pdf`).
const UNSAFE_CHARACTERS = /[\u0000-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/**
 * The name a document is stored under: the part after the last `/` or `\`, without control
 * characters, surrounding spaces or leading dots, at most 255 characters (the extension is kept
 * when a long name is cut), and `unnamed` when nothing is left.
 */
export function safeDocumentFilename(original: string | undefined): string {
  const base = (original ?? '').normalize('NFC').split(/[/\\]/).pop() ?? '';
  const cleaned = base.replace(UNSAFE_CHARACTERS, '').trim().replace(/^\.+/, '').trim();
  const characters = [...cleaned];
  if (characters.length === 0) return UNNAMED_FILENAME;
  if (characters.length <= FILENAME_MAX_CHARACTERS) return cleaned;
  const extension = /\.[^.]{1,16}$/.exec(cleaned)?.[0] ?? '';
  return characters.slice(0, FILENAME_MAX_CHARACTERS - [...extension].length).join('') + extension;
}
