import type { z } from 'zod';
import { MockDocumentUploadFields, addFieldError, fieldErrors, type Document, type DocumentListItem, type FieldErrors } from '../../contract';
import { ownedAccount, ownedDocument } from '../access';
import { MockError } from '../errors';
import type { Handlers } from '../handler';
import { indexesOf, newestFirst } from '../indexes';
import type { DocumentRecord } from '../state';
import { discardRestOfBody, receiveDocumentForm, type ReceivedFile, type ReceivedForm } from '../upload';
import { paginate } from './listing';

export const documentHandlers: Pick<Handlers, 'uploadDocument' | 'listDocuments' | 'getDocument'> = {
  async uploadDocument({ params, partner, request, reply }, deps) {
    // Checked before a byte is read, so another partner's account never receives a file; the
    // body it was sent is then read and thrown away while the answer goes out (a lingering close).
    try {
      ownedAccount(deps.store.state, partner, params.account_id);
    } catch (error) {
      discardRestOfBody(request, deps.settings.uploadMaxBytes);
      throw error;
    }
    const form = await receiveDocumentForm(request, reply, deps);
    let upload: ReturnType<typeof validatedUpload>;
    try {
      upload = validatedUpload(form);
      // Checked again: a reset while the file was streaming may have removed the account.
      ownedAccount(deps.store.state, partner, params.account_id);
    } catch (error) {
      if (form.file) await deps.store.blobs.remove(form.file.blob);
      throw error;
    }
    const { fields, file } = upload;
    const record: DocumentRecord = {
      id: deps.store.nextId('document'),
      account_id: params.account_id,
      filename: file.filename,
      tax_year: fields.tax_year,
      description: fields.description ?? '',
      file_size: file.size,
      file_type: file.mediaType,
      uploaded_at: deps.clock.nowIso(),
      blob: file.blob,
    };
    deps.store.state.documents.push(record);
    await deps.store.commit().catch(async (error: unknown) => {
      // Not saved, so not kept (the store went back to its saved state): neither is the file.
      await deps.store.blobs.remove(file.blob);
      throw error;
    });
    return documentOf(record);
  },

  listDocuments({ params, query, partner }, deps) {
    const { state } = deps.store;
    ownedAccount(state, partner, params.account_id);
    const matching = indexesOf(state)
      .documentsOfAccount(params.account_id)
      .filter((document) => query.tax_year === undefined || document.tax_year === query.tax_year)
      .sort(newestFirst((document) => document.uploaded_at));
    const { page, total_count, has_more } = paginate(matching, query);
    return { documents: page.map(documentListItemOf), total_count, has_more };
  },

  getDocument({ params, partner }, deps) {
    return documentOf(ownedDocument(deps.store.state, partner, params.document_id));
  },
};

/** Every problem of the form at once: the text fields by the contract's rules, and the file. */
function validatedUpload(form: ReceivedForm): { fields: z.output<typeof MockDocumentUploadFields>; file: ReceivedFile } {
  const parsed = MockDocumentUploadFields.safeParse(form.fields);
  const errors: FieldErrors = parsed.success ? {} : fieldErrors(parsed.error);
  for (const [field, messages] of Object.entries(form.errors)) messages.forEach((message) => addFieldError(errors, field, message));
  if (!form.file) addFieldError(errors, 'file', 'is required');
  else if (form.file.size === 0) addFieldError(errors, 'file', 'must not be empty');
  if (!parsed.success || !form.file || Object.keys(errors).length > 0) {
    throw new MockError('VALIDATION_ERROR', 'The upload is invalid; see details for each field.', errors);
  }
  return { fields: parsed.data, file: form.file };
}

function documentListItemOf(record: DocumentRecord): DocumentListItem {
  return {
    id: record.id,
    filename: record.filename,
    tax_year: record.tax_year,
    description: record.description,
    uploaded_at: record.uploaded_at,
  };
}

export function documentOf(record: DocumentRecord): Document {
  return { ...documentListItemOf(record), account_id: record.account_id, file_size: record.file_size, file_type: record.file_type };
}
