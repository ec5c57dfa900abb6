import type { z } from 'zod';
import {
  AccountPath,
  CreateAccountRequest,
  DeliverableListQuery,
  DocumentListQuery,
  DocumentPath,
  DocumentUploadFields,
  LoginLinkRequest,
  MockDocumentListQuery,
  MockDocumentUploadFields,
  MockLoginLinkRequest,
  MockProjectListQuery,
  ProjectListQuery,
  ProjectPath,
} from './requests';
import {
  Account,
  CreatedAccount,
  Deliverable,
  DeliverableList,
  Document,
  DocumentList,
  HealthRecord,
  LoginLinkRecord,
  ProjectList,
  ProjectStatusRecord,
} from './resources';

export { BASE_PATH } from './version';

/**
 * Permission scopes of an API key. The contract names `INSUFFICIENT_PERMISSIONS` but not the
 * scopes; these are this project's choice (docs/contract-notes.md).
 */
export const PERMISSIONS = [
  'accounts:read',
  'accounts:write',
  'login_links:write',
  'documents:read',
  'documents:write',
  'projects:read',
  'deliverables:read',
] as const;
export type Permission = (typeof PERMISSIONS)[number];

type Method = 'GET' | 'POST';

export interface Endpoint {
  method: Method;
  /** Relative to the base URL, with `:name` parameters. */
  path: string;
  /** Undefined for the one endpoint without authentication (health). */
  permission?: Permission;
  params?: z.ZodType;
  query?: z.ZodType;
  /** JSON body schema; `multipart` marks the upload, whose fields are `uploadFields` plus `file`. */
  body?: z.ZodType;
  /** The body as the mock takes it, when the mock adds rules of its own that the contract does not show (the client checks `body`). */
  mockBody?: z.ZodType;
  /** The query as the mock takes it, likewise. */
  mockQuery?: z.ZodType;
  multipart?: true;
  response: z.ZodType;
  successStatus: 200 | 201;
}

/** Every operation of the service, in one table used by the client, the mock's router and the docs. */
export const endpoints = {
  health: { method: 'GET', path: '/health', response: HealthRecord, successStatus: 200 },
  createAccount: {
    method: 'POST',
    path: '/accounts',
    permission: 'accounts:write',
    body: CreateAccountRequest,
    response: CreatedAccount,
    successStatus: 201,
  },
  getAccount: {
    method: 'GET',
    path: '/accounts/:account_id',
    permission: 'accounts:read',
    params: AccountPath,
    response: Account,
    successStatus: 200,
  },
  createLoginLink: {
    method: 'POST',
    path: '/accounts/:account_id/login-link',
    permission: 'login_links:write',
    params: AccountPath,
    body: LoginLinkRequest,
    mockBody: MockLoginLinkRequest,
    response: LoginLinkRecord,
    successStatus: 201,
  },
  uploadDocument: {
    method: 'POST',
    path: '/accounts/:account_id/documents',
    permission: 'documents:write',
    params: AccountPath,
    multipart: true,
    body: DocumentUploadFields,
    mockBody: MockDocumentUploadFields,
    response: Document,
    successStatus: 201,
  },
  listDocuments: {
    method: 'GET',
    path: '/accounts/:account_id/documents',
    permission: 'documents:read',
    params: AccountPath,
    query: DocumentListQuery,
    mockQuery: MockDocumentListQuery,
    response: DocumentList,
    successStatus: 200,
  },
  getDocument: {
    method: 'GET',
    path: '/documents/:document_id',
    permission: 'documents:read',
    params: DocumentPath,
    response: Document,
    successStatus: 200,
  },
  listProjects: {
    method: 'GET',
    path: '/accounts/:account_id/projects',
    permission: 'projects:read',
    params: AccountPath,
    query: ProjectListQuery,
    mockQuery: MockProjectListQuery,
    response: ProjectList,
    successStatus: 200,
  },
  getProjectStatus: {
    method: 'GET',
    path: '/projects/:project_id/status',
    permission: 'projects:read',
    params: ProjectPath,
    response: ProjectStatusRecord,
    successStatus: 200,
  },
  getProjectDeliverable: {
    method: 'GET',
    path: '/projects/:project_id/deliverable',
    permission: 'deliverables:read',
    params: ProjectPath,
    response: Deliverable,
    successStatus: 200,
  },
  listDeliverables: {
    method: 'GET',
    path: '/deliverables',
    permission: 'deliverables:read',
    query: DeliverableListQuery,
    response: DeliverableList,
    successStatus: 200,
  },
} as const satisfies Record<string, Endpoint>;

export type EndpointName = keyof typeof endpoints;
export type ResponseOf<N extends EndpointName> = z.infer<(typeof endpoints)[N]['response']>;

/** Fills `:name` parameters, encoding each value. */
export function endpointPath(path: string, params: Record<string, string | number> = {}): string {
  return path.replace(/:([a-z_]+)/g, (_, name: string) => {
    const value = params[name];
    if (value === undefined) throw new Error(`missing path parameter ${name}`);
    return encodeURIComponent(String(value));
  });
}
