import { Readable } from 'node:stream';
import { safeDocumentFilename, type DeliverableStatus } from '../contract';
import type { MockDeps } from './deps';
import type { DeliverableRecord, DocumentRecord, ProjectRecord } from './state';

/** What a new deliverable is made of; its document is created with it. */
export interface DeliverableFields {
  title: string;
  status: DeliverableStatus;
  summary: string;
  /** `<type>-<tax year>.txt` when absent. */
  filename?: string | undefined;
  file_type: string;
  /** The file's text; the title and summary when absent. */
  content?: string | undefined;
  view_link_hours: number;
}

/**
 * Gives a project its deliverable and the document that holds it (of the project's account and
 * tax year), both stamped `at`. The caller has checked that the project has none yet, and commits.
 * The `/_mock/projects/:id/deliverable` control and the simulation (`simulation/`) both use it.
 */
export async function addDeliverableRecords(
  deps: MockDeps,
  project: ProjectRecord,
  fields: DeliverableFields,
  at: string,
): Promise<{ deliverable: DeliverableRecord; document: DocumentRecord }> {
  const { state } = deps.store;
  const content = fields.content ?? `${fields.title}\n\n${fields.summary}\n`;
  const { blob, size } = await deps.store.blobs.write(Readable.from([Buffer.from(content, 'utf8')]), Number.MAX_SAFE_INTEGER);
  const document: DocumentRecord = {
    id: deps.store.nextId('document'),
    account_id: project.account_id,
    filename: safeDocumentFilename(fields.filename ?? `${project.type}-${project.tax_year}.txt`),
    tax_year: project.tax_year,
    description: `Deliverable: ${fields.title}`,
    file_size: size,
    file_type: fields.file_type,
    uploaded_at: at,
    blob,
  };
  const deliverable: DeliverableRecord = {
    id: deps.store.nextId('deliverable'),
    project_id: project.id,
    document_id: document.id,
    title: fields.title,
    status: fields.status,
    summary: fields.summary,
    prepared_date: at,
    view_link_hours: fields.view_link_hours,
  };
  state.documents.push(document);
  state.deliverables.push(deliverable);
  project.last_updated = at;
  return { deliverable, document };
}
