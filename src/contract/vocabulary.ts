/**
 * The contract's enums and limits as plain data, without zod: the zod schemas of src/contract are
 * built from these, and so are the CLI's help texts and shell completions, which must load fast.
 */

export const ACCOUNT_STATUSES = ['active', 'onboarding', 'suspended', 'completed'] as const;
export const SPOUSE_STATUSES = ['invited', 'pending'] as const;
export const LOGIN_LINK_PURPOSES = ['initial_access', 'expired_link', 'lost_credentials', 'additional_user', 'support_request'] as const;
export const PROJECT_TYPES = ['tax_return', 'quarterly_estimate', 'tax_planning', 'equity_planning'] as const;
export const PROJECT_STATUSES = ['waiting_on_client', 'in_progress', 'in_review', 'completed'] as const;
export const OUTSTANDING_ITEM_TYPES = ['missing_document', 'client_request'] as const;
/** The contract shows `high` and `medium`; `low` completes the scale (a choice, see docs/contract-notes.md). */
export const OUTSTANDING_ITEM_PRIORITIES = ['high', 'medium', 'low'] as const;
export const DELIVERABLE_STATUSES = ['draft', 'completed', 'delivered'] as const;
export const DELIVERABLE_TYPES = ['tax_return', 'quarterly_estimate', 'tax_plan', 'equity_plan'] as const;

export const NAME_MAX_CHARACTERS = 50;
export const EMAIL_MAX_LENGTH = 254;
export const PAGE_SIZE = { min: 1, max: 100, default: 50 } as const;
export const EXPIRY_HOURS = { min: 1, max: 168, default: 168 } as const;
/** The login link returned with a new account expires 7 days after creation (Account: login_link_expires_at). */
export const CREATION_LINK_LIFETIME_MS = 7 * 24 * 60 * 60 * 1000;
/**
 * The contract says only that a tax year is "a year": the client takes any year of four digits and
 * the service decides. The mock's range is its own choice (MOCK_TAX_YEAR), like its upload limits.
 */
export const TAX_YEAR = { min: 1000, max: 9999 } as const;
export const MOCK_TAX_YEAR = { min: 1900, max: 2100 } as const;
export const OFFSET_MAX = 1_000_000_000;
export const DESCRIPTION_MAX_CHARACTERS = 1000;
export const CUSTOM_SUBJECT_MAX_CHARACTERS = 200;
export const CUSTOM_MESSAGE_MAX_CHARACTERS = 2000;
export const ACCOUNT_LOGIN_LINK_DAYS = 7;
