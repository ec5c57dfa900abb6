import * as z from 'zod';
import { oneOf } from './rules';

import {
  DELIVERABLE_STATUSES,
  DELIVERABLE_TYPES,
  LOGIN_LINK_PURPOSES,
  PROJECT_STATUSES,
  PROJECT_TYPES,
  type ACCOUNT_STATUSES,
  type SPOUSE_STATUSES,
} from './vocabulary';

export {
  ACCOUNT_STATUSES,
  DELIVERABLE_STATUSES,
  DELIVERABLE_TYPES,
  LOGIN_LINK_PURPOSES,
  OUTSTANDING_ITEM_PRIORITIES,
  OUTSTANDING_ITEM_TYPES,
  PROJECT_STATUSES,
  PROJECT_TYPES,
  SPOUSE_STATUSES,
} from './vocabulary';

/**
 * Response shapes, as the mock answers them. Objects are loose and ids may be numbers or strings,
 * since the contract's samples show both. The client reads answers through the tolerant forms of
 * these schemas (src/api/tolerant.ts), which require only what the contract guarantees.
 */

export type AccountStatus = (typeof ACCOUNT_STATUSES)[number];
export type SpouseStatus = (typeof SPOUSE_STATUSES)[number];
export type LoginLinkPurpose = (typeof LOGIN_LINK_PURPOSES)[number];
export type ProjectType = (typeof PROJECT_TYPES)[number];
export type ProjectStatus = (typeof PROJECT_STATUSES)[number];
export type DeliverableStatus = (typeof DELIVERABLE_STATUSES)[number];
export type DeliverableType = (typeof DELIVERABLE_TYPES)[number];

/** The single-project deliverable endpoint names types by deliverable, the list endpoint by project. */
export const DELIVERABLE_TYPE_OF_PROJECT: Record<ProjectType, DeliverableType> = {
  tax_return: 'tax_return',
  quarterly_estimate: 'quarterly_estimate',
  tax_planning: 'tax_plan',
  equity_planning: 'equity_plan',
};

export const Id = z.union([z.number(), z.string()]);
export const Timestamp = z.string();

export const HealthRecord = z.looseObject({ status: z.string(), timestamp: Timestamp });

export const Spouse = z.looseObject({
  id: Id,
  email: z.string(),
  first_name: z.string(),
  last_name: z.string(),
  login_link: z.string().optional(),
  login_link_expires_at: Timestamp.optional(),
  status: z.string(),
});

export const CreatedAccount = z.looseObject({
  id: Id,
  email: z.string(),
  first_name: z.string(),
  last_name: z.string(),
  status: z.string(),
  login_link: z.string(),
  login_link_expires_at: Timestamp,
  spouse: Spouse.optional(),
  created_at: Timestamp,
});

export const Account = z.looseObject({
  id: Id,
  email: z.string(),
  first_name: z.string(),
  last_name: z.string(),
  status: z.string(),
});

export const LoginLinkRecord = z.looseObject({
  login_link: z.string(),
  user_email: z.string(),
  expires_at: Timestamp,
  expires_in_hours: z.number(),
  purpose: z.string(),
  redirect_url: z.string().nullable(),
  notification_sent: z.boolean(),
  previous_links_invalidated: z.number(),
  created_at: Timestamp,
  account_id: Id,
});

export const DocumentListItem = z.looseObject({
  id: Id,
  filename: z.string(),
  tax_year: z.number(),
  description: z.string(),
  uploaded_at: Timestamp,
});

export const Document = DocumentListItem.extend({
  account_id: Id,
  file_size: z.number(),
  file_type: z.string(),
});

export const DocumentList = z.looseObject({
  documents: z.array(DocumentListItem),
  total_count: z.number(),
  has_more: z.boolean(),
});

export const OutstandingItem = z.looseObject({
  type: z.string(),
  description: z.string(),
  priority: z.string(),
  requested_at: Timestamp,
});

export const ProjectListItem = z.looseObject({
  id: Id,
  type: z.string(),
  tax_year: z.number(),
  status: z.string(),
  progress_percentage: z.number(),
  created_at: Timestamp,
  estimated_completion: Timestamp.nullable(),
});

export const ProjectList = z.looseObject({ projects: z.array(ProjectListItem), total_count: z.number() });

export const ProjectStatusRecord = z.looseObject({
  id: Id,
  account_id: Id,
  type: z.string(),
  tax_year: z.number(),
  status: z.string(),
  progress_percentage: z.number(),
  estimated_completion: Timestamp.nullable(),
  last_updated: Timestamp,
  outstanding_items: z.array(OutstandingItem),
});

export const Deliverable = z.looseObject({
  deliverable_id: Id,
  project_id: Id,
  document_id: Id,
  title: z.string(),
  type: z.string(),
  status: z.string(),
  view_link: z.string(),
  summary: z.string(),
  prepared_date: Timestamp,
  expires_at: Timestamp,
});

export const DeliverableListItem = z.looseObject({
  id: Id,
  project_id: Id,
  account_id: Id,
  document_id: Id,
  title: z.string(),
  project_type: z.string(),
  status: z.string(),
  view_link: z.string(),
  summary: z.string(),
  prepared_date: Timestamp,
  expires_at: Timestamp,
});

export const DeliverableList = z.looseObject({
  deliverables: z.array(DeliverableListItem),
  total_count: z.number(),
  has_more: z.boolean(),
});

export type HealthRecord = z.infer<typeof HealthRecord>;
export type Spouse = z.infer<typeof Spouse>;
export type CreatedAccount = z.infer<typeof CreatedAccount>;
export type Account = z.infer<typeof Account>;
export type LoginLinkRecord = z.infer<typeof LoginLinkRecord>;
export type DocumentListItem = z.infer<typeof DocumentListItem>;
export type Document = z.infer<typeof Document>;
export type DocumentList = z.infer<typeof DocumentList>;
export type OutstandingItem = z.infer<typeof OutstandingItem>;
export type ProjectListItem = z.infer<typeof ProjectListItem>;
export type ProjectList = z.infer<typeof ProjectList>;
export type ProjectStatusRecord = z.infer<typeof ProjectStatusRecord>;
export type Deliverable = z.infer<typeof Deliverable>;
export type DeliverableListItem = z.infer<typeof DeliverableListItem>;
export type DeliverableList = z.infer<typeof DeliverableList>;

export const enumFilter = {
  projectType: oneOf(PROJECT_TYPES),
  projectStatus: oneOf(PROJECT_STATUSES),
  deliverableStatus: oneOf(DELIVERABLE_STATUSES),
  purpose: oneOf(LOGIN_LINK_PURPOSES),
};
