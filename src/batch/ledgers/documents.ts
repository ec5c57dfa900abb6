import { randomUUID } from 'node:crypto';
import { LedgerState, type LedgerKind, type LineStore } from '../ledger';
import { DOCUMENTS_FILE_NAME } from './fileNames';

/**
 * The documents ledger: which content `docs sync` uploaded where (service, account, tax year,
 * stored name, sha256, document id), so that a re-run skips what is there without asking, and a
 * changed file under a known name is told from one never seen.
 *
 * An `intent` line is durable before an upload is sent, holding the ids of the documents of that
 * name the account had then; `uploaded` (with the new document's id) or `refused` (the service
 * provably stored nothing) settles it. An intent left open (a kill mid-upload, a timeout) is
 * resolved by the next run against the account's list: a document of that name it did not know
 * means the upload arrived; none means it did not, and it is sent again. So no file is ever stored
 * twice, however often a run is killed. The content itself is never written here.
 */
export const DOCUMENTS: LedgerKind = {
  label: 'documents',
  fileName: DOCUMENTS_FILE_NAME,
  types: ['intent', 'uploaded', 'refused'],
  damagedHint: 'the next sync then asks the service which names each account has, and skips those',
};

/** Where a document goes: the service origin, the account, the tax year and the stored name. */
export interface DocumentTarget {
  origin: string;
  account_id: number;
  tax_year: number;
  filename: string;
}

interface Meta {
  profile: string | null;
  at: string;
}

export interface DocumentIntentEntry extends DocumentTarget, Meta {
  type: 'intent';
  id: string;
  sha256: string;
  size: number;
  /** The documents of this name the account had when the upload started. */
  known_ids: string[];
}

export interface DocumentUploadedEntry extends DocumentTarget, Meta {
  type: 'uploaded';
  /** The intent it settles; absent when a later run found an interrupted upload in the account's list. */
  intent?: string;
  sha256: string;
  size: number;
  document_id: string;
}

export interface DocumentRefusedEntry extends DocumentTarget, Meta {
  type: 'refused';
  intent: string;
  code: string;
}

export type DocumentsLedgerEntry = DocumentIntentEntry | DocumentUploadedEntry | DocumentRefusedEntry;

const nameKey = (target: DocumentTarget) => `${target.origin}|${target.account_id}|${target.tax_year}|${target.filename}`;
const contentKey = (target: Omit<DocumentTarget, 'filename'>, sha256: string) => `${target.origin}|${target.account_id}|${target.tax_year}|${sha256}`;

/** The documents ledger's content, folded from its lines: uploads by content and by name, open intents. */
export class DocumentsLedgerView extends LedgerState<DocumentsLedgerEntry> {
  private readonly byContent = new Map<string, DocumentUploadedEntry>();
  private readonly byName = new Map<string, DocumentUploadedEntry>();
  private readonly openIntents = new Map<string, DocumentIntentEntry>();

  constructor(source: LineStore | string) {
    super(source, DOCUMENTS);
  }

  protected apply(entry: DocumentsLedgerEntry): void {
    this.entries.push(entry);
    const key = nameKey(entry);
    if (entry.type === 'intent') {
      this.openIntents.set(key, entry);
      return;
    }
    if (entry.intent !== undefined ? this.openIntents.get(key)?.id === entry.intent : entry.type === 'uploaded') this.openIntents.delete(key);
    if (entry.type === 'uploaded') {
      this.byName.set(key, entry);
      this.byContent.set(contentKey(entry, entry.sha256), entry);
    }
  }

  /** The upload of this content to the account and year, under any name. */
  uploadedContent(target: Omit<DocumentTarget, 'filename'>, sha256: string): DocumentUploadedEntry | undefined {
    return this.byContent.get(contentKey(target, sha256));
  }

  /** The last upload under this name. */
  uploadedUnder(target: DocumentTarget): DocumentUploadedEntry | undefined {
    return this.byName.get(nameKey(target));
  }

  /** An upload started under this name without an answer recorded: it may or may not have arrived. */
  openIntent(target: DocumentTarget): DocumentIntentEntry | undefined {
    return this.openIntents.get(nameKey(target));
  }

  /** Uploads started without an answer recorded, under any name. */
  uncertainIntents(): DocumentIntentEntry[] {
    return [...this.openIntents.values()];
  }

  uploads(): DocumentUploadedEntry[] {
    return [...new Set(this.byContent.values())];
  }

  /** Lines still needed: the last upload per content and per name, and open intents. */
  protected liveEntries(): DocumentsLedgerEntry[] {
    const live = new Set<DocumentsLedgerEntry>([...this.byContent.values(), ...this.byName.values(), ...this.openIntents.values()]);
    return this.entries.filter((entry) => live.has(entry));
  }
}

/** Reads the documents ledger without changing it (a dry run). */
export function readDocumentsLedger(source: LineStore | string): Promise<DocumentsLedgerView> {
  return new DocumentsLedgerView(source).read();
}

/** The documents ledger opened for writing, by the holder of its lock; appends are durable when they resolve. */
export class DocumentsLedger extends DocumentsLedgerView {
  static async open(source: LineStore | string): Promise<DocumentsLedger> {
    const ledger = await new DocumentsLedger(source).read();
    await ledger.openForAppend();
    return ledger;
  }

  /** Records that an upload is about to be sent; durable before it resolves. Returns the intent id. */
  async recordIntent(target: DocumentTarget, fields: { sha256: string; size: number; known_ids: string[]; profile: string | null; at: Date }): Promise<string> {
    const id = randomUUID();
    await this.append({ type: 'intent', id, ...target, sha256: fields.sha256, size: fields.size, known_ids: fields.known_ids, profile: fields.profile, at: fields.at.toISOString() });
    return id;
  }

  /** The service stored the content as `document_id` (an answer to this run, or found in the list for an earlier one). */
  async recordUploaded(target: DocumentTarget, fields: { intent?: string; sha256: string; size: number; document_id: string; profile: string | null; at: Date }): Promise<void> {
    const { intent, at, ...rest } = fields;
    await this.append({ type: 'uploaded', ...(intent === undefined ? {} : { intent }), ...target, ...rest, at: at.toISOString() });
  }

  /** The service provably stored nothing (an answer below 500, or no connection at all): the intent is settled. */
  async recordRefused(intent: string, target: DocumentTarget, fields: { code: string; profile: string | null; at: Date }): Promise<void> {
    await this.append({ type: 'refused', intent, ...target, code: fields.code, profile: fields.profile, at: fields.at.toISOString() });
  }
}
