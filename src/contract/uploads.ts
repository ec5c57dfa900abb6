/**
 * Document uploads: the media types the service accepts and how a client's filename is stored.
 * The contract leaves both "not shown"; these are this project's choices (README, "Contract notes").
 */

/** Tax paperwork: PDFs, scans and photos, spreadsheets and word-processor files, plain text and CSV. */
export const DOCUMENT_MEDIA_TYPES = [
  'application/pdf',
  'image/jpeg',
  'image/png',
  'image/heic',
  'image/heif',
  'image/tiff',
  'image/webp',
  'text/plain',
  'text/csv',
  'application/vnd.ms-excel',
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  'application/msword',
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
] as const;

/** The media type without parameters, lower case: `Text/Plain; charset=utf-8` -> `text/plain`. */
export function mediaTypeEssence(contentType: string): string {
  return (contentType.split(';')[0] ?? '').trim().toLowerCase();
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
