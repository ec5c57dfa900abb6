import type { Permission } from '../contract/endpoints';
import type {
  AccountStatus,
  DeliverableStatus,
  LoginLinkPurpose,
  ProjectStatus,
  ProjectType,
  SpouseStatus,
} from '../contract/resources';

/**
 * The mock's whole state: plain JSON-serialisable records, so that persistence writes them as they
 * are (a snapshot, and the journal of the records each write changed: src/mock/persistence.ts) and
 * a reset is a fresh copy of the seed. Timestamps are ISO strings of the virtual
 * clock. Ids are positive integers handed out by `nextIds`.
 */
export interface MockState {
  partners: PartnerRecord[];
  apiKeys: ApiKeyRecord[];
  accounts: AccountRecord[];
  users: UserRecord[];
  loginLinks: LoginLinkRecordStored[];
  documents: DocumentRecord[];
  projects: ProjectRecord[];
  outstandingItems: OutstandingItemRecord[];
  deliverables: DeliverableRecord[];
  /** Notification emails the service would have sent (login links, spouse invitations). */
  outbox: OutboxEmail[];
  /** Next id for each kind of record. */
  nextIds: Record<IdKind, number>;
  /** Virtual clock offset from the real clock, in milliseconds (advanced by `/_mock/clock`). */
  clockOffsetMs: number;
  /** Random secret (base64url) that signs deliverable view links, made when the state is first seeded. */
  signingSecret: string;
  /** How far `serve --mock --simulate` has moved the records (absent until a simulation starts; a reset removes it). */
  simulation?: SimulationCursor;
}

/** Where the simulation stands (`src/mock/simulation/`): saved with the state, so a restart continues it. */
export interface SimulationCursor {
  seed: number;
  /** Virtual time the simulation started at: step `n` happens at `started_at_ms + n` hours. */
  started_at_ms: number;
  /** Steps already taken. */
  steps_done: number;
  /** How many of `documents` (in upload order) were already compared with the outstanding items. */
  documents_seen: number;
}

export type IdKind = 'partner' | 'account' | 'user' | 'loginLink' | 'document' | 'project' | 'outstandingItem' | 'deliverable' | 'email';

export interface PartnerRecord {
  id: number;
  name: string;
  /** Domains (and their subdomains) that `redirect_url` may point at. */
  permitted_redirect_domains: string[];
}

export interface ApiKeyRecord {
  /** SHA-256 of the key, hex. The key itself is never stored; the seed prints it once at start-up. */
  key_sha256: string;
  /** Prefix and last 4 characters, for logs and listings. */
  redacted: string;
  partner_id: number;
  label: string;
  permissions: Permission[];
  /** Null for a key that never expires. */
  expires_at: string | null;
}

export interface AccountRecord {
  id: number;
  partner_id: number;
  email: string;
  first_name: string;
  last_name: string;
  status: AccountStatus;
  created_at: string;
}

/** Every person who can log in to an account: the primary holder and at most one spouse. */
export interface UserRecord {
  id: number;
  account_id: number;
  role: 'primary' | 'spouse';
  email: string;
  first_name: string;
  last_name: string;
  /** Spouse status (`invited` or `pending`); null for the primary holder. */
  spouse_status: SpouseStatus | null;
  created_at: string;
}

export interface LoginLinkRecordStored {
  id: number;
  /** SHA-256 of the token, hex: a leaked state file does not leak working links. */
  token_sha256: string;
  account_id: number;
  user_id: number;
  purpose: LoginLinkPurpose;
  redirect_url: string | null;
  created_at: string;
  expires_at: string;
  /** Set when a newer link for the same user replaced this one. */
  invalidated_at: string | null;
  /** Set when the link was opened (links are single-use). */
  used_at: string | null;
}

export interface DocumentRecord {
  id: number;
  account_id: number;
  filename: string;
  tax_year: number;
  description: string;
  file_size: number;
  file_type: string;
  uploaded_at: string;
  /** Name of the stored file in the blob store (never derived from the client's filename). */
  blob: string;
}

export interface ProjectRecord {
  id: number;
  account_id: number;
  type: ProjectType;
  tax_year: number;
  status: ProjectStatus;
  progress_percentage: number;
  created_at: string;
  estimated_completion: string | null;
  last_updated: string;
}

export interface OutstandingItemRecord {
  id: number;
  project_id: number;
  type: 'missing_document' | 'client_request';
  description: string;
  priority: 'high' | 'medium' | 'low';
  requested_at: string;
}

export interface DeliverableRecord {
  id: number;
  /** Each project has at most one (primary) deliverable. */
  project_id: number;
  document_id: number;
  title: string;
  status: DeliverableStatus;
  summary: string;
  prepared_date: string;
  /** How long a freshly issued view link stays valid, in hours. */
  view_link_hours: number;
}

export interface OutboxEmail {
  id: number;
  to: string;
  /** Sender name: the partner's when the email is partner-branded, the service's otherwise. */
  from: string;
  subject: string;
  body: string;
  /** What the email was for: a login link, or a spouse invitation at account creation. */
  kind: 'login_link' | 'spouse_invitation';
  account_id: number;
  partner_branded: boolean;
  sent_at: string;
}
