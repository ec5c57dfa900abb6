import type { DocumentRecord, OutstandingItemRecord, ProjectRecord } from '../state';

/**
 * When an upload answers a `missing_document` item (docs/mock.md, "Simulating the preparer"). The item's
 * key is the first word of its description that names a form (has a digit and is not a year:
 * `1098`, `1099-NEC`, `W-2`, `K-1`), else its first word (`Receipts`, `RSU`). An upload answers the
 * item when it belongs to the project's account and tax year, came at or after the request, and
 * its filename or description contains the key, ignoring case and everything but letters and
 * digits (`1099-nec-q3.pdf` answers "Third-quarter 1099-NEC forms").
 */
export function documentKeyOf(description: string): string {
  const words = description.split(/\s+/).map(lettersAndDigits).filter((word) => word !== '');
  return words.find((word) => /\d/.test(word) && !isYear(word)) ?? words[0] ?? '';
}

export function uploadAnswersItem(upload: DocumentRecord, item: OutstandingItemRecord, project: ProjectRecord): boolean {
  if (item.type !== 'missing_document' || upload.account_id !== project.account_id || upload.tax_year !== project.tax_year) return false;
  if (upload.uploaded_at < item.requested_at) return false;
  const key = documentKeyOf(item.description);
  return key !== '' && (lettersAndDigits(upload.filename).includes(key) || lettersAndDigits(upload.description).includes(key));
}

function lettersAndDigits(text: string): string {
  return text.toLowerCase().replace(/[^\p{L}\p{N}]/gu, '');
}

function isYear(word: string): boolean {
  return /^\d{4}$/.test(word) && Number(word) >= 1900 && Number(word) <= 2100;
}
