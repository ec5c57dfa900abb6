import { MockError } from './errors';
import { indexesOf } from './indexes';
import type { AccountRecord, DocumentRecord, PartnerRecord, ProjectRecord } from './state';
import type { MockState } from './state';

/**
 * Partner isolation in one place: every route that takes an id resolves it here, so that another
 * partner's record is always `ACCESS_DENIED` and an unknown one always the matching `*_NOT_FOUND`.
 */
export function ownedAccount(state: MockState, partner: PartnerRecord, accountId: number): AccountRecord {
  const account = indexesOf(state).account(accountId);
  if (!account) throw new MockError('ACCOUNT_NOT_FOUND', `No account with id ${accountId} exists.`, { account_id: accountId });
  if (account.partner_id !== partner.id) {
    throw new MockError('ACCESS_DENIED', `Account ${accountId} belongs to another partner.`, { account_id: accountId });
  }
  return account;
}

export function ownedProject(state: MockState, partner: PartnerRecord, projectId: number): ProjectRecord {
  const project = indexesOf(state).project(projectId);
  if (!project) throw new MockError('PROJECT_NOT_FOUND', `No project with id ${projectId} exists.`, { project_id: projectId });
  if (partnerOfAccount(state, project.account_id) !== partner.id) {
    throw new MockError('ACCESS_DENIED', `Project ${projectId} belongs to another partner.`, { project_id: projectId });
  }
  return project;
}

export function ownedDocument(state: MockState, partner: PartnerRecord, documentId: number): DocumentRecord {
  const document = indexesOf(state).document(documentId);
  if (!document) throw new MockError('DOCUMENT_NOT_FOUND', `No document with id ${documentId} exists.`, { document_id: documentId });
  if (partnerOfAccount(state, document.account_id) !== partner.id) {
    throw new MockError('ACCESS_DENIED', `Document ${documentId} belongs to another partner.`, { document_id: documentId });
  }
  return document;
}

export function partnerOfAccount(state: MockState, accountId: number): number | undefined {
  return indexesOf(state).account(accountId)?.partner_id;
}
