import type { SyncSource } from './syncSources';

/**
 * What `docs sync` does with each file, decided from the sync ledger and the account's document
 * list, as pure functions: the same code plans a dry run and a real one (rclone's way).
 *
 * A file is already uploaded when the ledger records its content (sha256) for that account and
 * tax year, or when the account has a document of the same stored name and tax year. A name the
 * account has whose content the ledger knows to differ is a conflict: never uploaded silently.
 */

/** A file ready to plan: where it goes, the name the service will store, its content hash. */
export interface SyncFile extends SyncSource {
  filename: string;
  sha256: string;
  size: number;
}

/** Where a document goes: the account, the tax year and the stored name. */
export interface DocumentSlot {
  account_id: number;
  tax_year: number;
  filename: string;
}

/** What the ledger knows about one account and tax year (see ./syncLedger.ts). */
export interface LedgerKnowledge {
  /** A document this sync uploaded with this content, in this account and tax year. */
  uploadedContent(account_id: number, tax_year: number, sha256: string): { document_id: string; filename: string } | undefined;
  /** The content this sync last uploaded under the name, and its document. */
  uploadedUnder(slot: DocumentSlot): { sha256: string; document_id: string } | undefined;
  /** An upload that was started under the name and never answered (a run killed mid-upload). */
  openIntent(slot: DocumentSlot): { sha256: string; known_ids: string[] } | undefined;
}

/** The account's documents of one tax year with that stored name, newest first; absent: not asked (offline). */
export type Listing = ReadonlyMap<string, ReadonlyArray<{ id: string }>>;

export type SkipReason =
  /** The ledger records this content uploaded to the account and year. */
  | 'uploaded_before'
  /** The account has a document of this name and year, content unknown to the ledger. */
  | 'name_on_service'
  /** An interrupted run's upload reached the service: the list shows a document it did not know. */
  | 'interrupted_upload_stored'
  /** Another file of this run has the same name and content. */
  | 'same_file_in_run';

export type UploadReason =
  | 'new'
  /** The content differs from what this sync uploaded under the name, and `--upload-changed` was given. */
  | 'changed'
  /** An interrupted run's upload is not on the service: sent again. */
  | 'interrupted_upload_missing'
  /** Offline dry run: not in the ledger, and the service was not asked. */
  | 'not_in_ledger';

export type ConflictReason =
  /** The content differs from what this sync uploaded under the name. */
  | 'content_changed'
  /** Another file of this run goes under the same name with other content. */
  | 'same_name_in_run';

/** An interrupted upload the list shows stored: the run records it in the ledger, whatever it decides. */
export interface Landed {
  document_id: string;
  sha256: string;
}

export type Decision =
  | { action: 'upload'; reason: UploadReason; document_id?: string; known_ids: string[]; landed?: Landed }
  | { action: 'skip'; reason: SkipReason; document_id?: string; landed?: Landed }
  | { action: 'conflict'; reason: ConflictReason; document_id?: string; other?: string; landed?: Landed };

export function slotKey(slot: DocumentSlot): string {
  return `${slot.account_id}|${slot.tax_year}|${slot.filename}`;
}

export function groupKey(file: Pick<DocumentSlot, 'account_id' | 'tax_year'>): string {
  return `${file.account_id}|${file.tax_year}`;
}

/** Whether the ledger alone settles the file (its content is recorded): no list request needed for it. */
export function settledByLedger(file: SyncFile, ledger: LedgerKnowledge): boolean {
  return ledger.uploadedContent(file.account_id, file.tax_year, file.sha256) !== undefined;
}

/**
 * The account and year groups whose list the plan needs: those with a file the ledger does not
 * settle. A run where the ledger knows every file sends no list request at all.
 */
export function groupsToList(files: readonly SyncFile[], ledger: LedgerKnowledge): Array<{ account_id: number; tax_year: number }> {
  const groups = new Map<string, { account_id: number; tax_year: number }>();
  for (const file of files) {
    if (!settledByLedger(file, ledger)) groups.set(groupKey(file), { account_id: file.account_id, tax_year: file.tax_year });
  }
  return [...groups.values()];
}

/**
 * One file's decision. `listing` is the account's documents of the file's year by stored name, or
 * undefined when the service was not asked (`--dry-run --offline`).
 */
export function decide(file: SyncFile, ledger: LedgerKnowledge, listing: Listing | undefined, options: { uploadChanged: boolean }): Decision {
  const content = ledger.uploadedContent(file.account_id, file.tax_year, file.sha256);
  if (content !== undefined) return { action: 'skip', reason: 'uploaded_before', document_id: content.document_id };
  const onService = listing?.get(file.filename) ?? [];
  const intent = ledger.openIntent(file);
  const stored = intent === undefined ? undefined : onService.find((document) => !intent.known_ids.includes(document.id));
  const landed = stored === undefined ? undefined : { document_id: stored.id, sha256: intent!.sha256 };
  const decision = decideWithoutIntent(file, ledger, listing, options, landed);
  if (landed !== undefined) return { ...decision, landed };
  if (intent !== undefined && decision.action === 'upload' && decision.reason === 'new') return { ...decision, reason: 'interrupted_upload_missing' };
  return decision;
}

function decideWithoutIntent(file: SyncFile, ledger: LedgerKnowledge, listing: Listing | undefined, options: { uploadChanged: boolean }, landed: Landed | undefined): Decision {
  if (landed?.sha256 === file.sha256) return { action: 'skip', reason: 'interrupted_upload_stored', document_id: landed.document_id };
  // What this sync last put under the name: an interrupted upload that landed is newer than the ledger's.
  const previous = landed ?? ledger.uploadedUnder(file);
  const changed = previous !== undefined && previous.sha256 !== file.sha256;
  const conflict: Decision = { action: 'conflict', reason: 'content_changed', document_id: previous?.document_id };
  if (listing === undefined) {
    if (changed && !options.uploadChanged) return conflict;
    return { action: 'upload', reason: changed ? 'changed' : 'not_in_ledger', known_ids: [] };
  }
  const onService = listing.get(file.filename) ?? [];
  const knownIds = onService.map((document) => document.id);
  if (onService.length === 0) return { action: 'upload', reason: 'new', known_ids: knownIds };
  if (!changed) return { action: 'skip', reason: 'name_on_service', document_id: onService[0]!.id };
  if (!options.uploadChanged) return { ...conflict, document_id: onService[0]!.id };
  return { action: 'upload', reason: 'changed', document_id: onService[0]!.id, known_ids: knownIds };
}

export interface PlannedFile {
  file: SyncFile;
  decision: Decision;
}

/**
 * Decides every file, in input order. Two files going under one name in one run: the first is
 * decided as usual; a later one with the same content is skipped, with other content a conflict.
 */
export function plan(files: readonly SyncFile[], ledger: LedgerKnowledge, listings: ReadonlyMap<string, Listing> | undefined, options: { uploadChanged: boolean }): PlannedFile[] {
  const firstBySlot = new Map<string, SyncFile>();
  return files.map((file) => {
    const first = firstBySlot.get(slotKey(file));
    if (first !== undefined) {
      const decision: Decision =
        first.sha256 === file.sha256 ? { action: 'skip', reason: 'same_file_in_run' } : { action: 'conflict', reason: 'same_name_in_run', other: first.relative };
      return { file, decision };
    }
    firstBySlot.set(slotKey(file), file);
    const listing = listings === undefined ? undefined : (listings.get(groupKey(file)) ?? new Map());
    return { file, decision: decide(file, ledger, listing, options) };
  });
}

/** The reason in words, for the plan and the result lines. */
export function describeDecision(decision: Decision): string {
  const document = decision.document_id === undefined ? '' : ` (document ${decision.document_id})`;
  switch (decision.reason) {
    case 'new':
      return 'not on the service';
    case 'changed':
      return `content changed since the last sync${document}; --upload-changed`;
    case 'interrupted_upload_missing':
      return 'an interrupted upload that never reached the service';
    case 'not_in_ledger':
      return 'not in the ledger (the service was not asked: --offline)';
    case 'uploaded_before':
      return `uploaded before with this content${document}`;
    case 'name_on_service':
      return `the account has this name for the year${document}`;
    case 'interrupted_upload_stored':
      return `an interrupted upload that reached the service${document}`;
    case 'same_file_in_run':
      return 'the same name and content appear earlier in this run';
    case 'content_changed':
      return `content differs from what was uploaded under this name${document}; pass --upload-changed to upload it`;
    case 'same_name_in_run':
      return `goes under the same name as ${decision.other ?? 'another file'} with other content`;
  }
}
