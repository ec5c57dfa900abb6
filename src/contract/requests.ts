import * as z from 'zod';
import {
  CUSTOM_MESSAGE_MAX_CHARACTERS,
  CUSTOM_SUBJECT_MAX_CHARACTERS,
  DESCRIPTION_MAX_CHARACTERS,
  EXPIRY_HOURS,
  OFFSET_MAX,
  PAGE_SIZE,
  MOCK_TAX_YEAR,
  TAX_YEAR,
  boolean,
  email,
  integer,
  multilineText,
  pathId,
  personName,
  text,
} from './rules';
import { enumFilter } from './resources';

/**
 * Request shapes: bodies, queries and path parameters. Bodies are strict (an unknown field is a
 * typo worth reporting); `expiry_hours` and `redirect_url` are only type-checked here because the
 * contract gives their range and domain failures codes of their own (see `loginLinkRules`).
 */

export const CreateAccountRequest = z.strictObject(
  {
    email,
    first_name: personName,
    last_name: personName,
    spouse: z
      .strictObject(
        {
          // JSON Schema cannot compare two fields: the document states the rule the mock applies beside it.
          email: email.meta({ description: "Must differ from the account's own `email` (400 VALIDATION_ERROR naming spouse.email).", 'x-differs-from': 'email' }),
          first_name: personName,
          last_name: personName,
          send_invitation: boolean.optional(),
        },
        { error: (issue) => (issue.input === undefined ? 'is required' : 'must be an object') },
      )
      .optional(),
  },
  { error: 'must be a JSON object' },
);
export type CreateAccountRequest = z.input<typeof CreateAccountRequest>;

/**
 * The email's customisation. The contract shows no length for the subject or the message: the
 * client sends any, and the service decides; the mock's limits are its own (MockLoginLinkRequest).
 */
export const NotificationSettings = z.strictObject(
  {
    partner_branded: boolean.optional(),
    custom_subject: text().optional(),
    custom_message: multilineText().optional(),
    include_instructions: boolean.optional(),
  },
  { error: 'must be an object' },
);

/**
 * The contract lists five purposes and does not say whether others are refused: the client sends
 * any, and the service decides; the mock takes only the listed ones (MockLoginLinkRequest).
 */
export const loginLinkPurpose = text();

export const LoginLinkRequest = z.strictObject(
  {
    user_email: email.optional(),
    // Range and domain are the service's to judge (their own codes); the document states them all the same.
    expiry_hours: z
      .number({ error: 'must be an integer' })
      .meta({ type: 'integer', minimum: EXPIRY_HOURS.min, maximum: EXPIRY_HOURS.max, description: 'Hours until expiry; outside the range or not a whole number: 400 INVALID_EXPIRY.' })
      .optional(),
    purpose: loginLinkPurpose.optional(),
    redirect_url: z
      .string({ error: 'must be a string' })
      .meta({ format: 'uri', pattern: '^https://', description: 'An HTTPS URL on a domain permitted for the partner; otherwise 400 INVALID_REDIRECT_URL.' })
      .optional(),
    send_notification: boolean.optional(),
    notification_settings: NotificationSettings.optional(),
  },
  { error: 'must be a JSON object' },
);
export type LoginLinkRequest = z.input<typeof LoginLinkRequest>;

/** What the mock takes: a listed purpose, a subject of at most 200 characters and a message of at most 2000 (its choices). */
export const MockLoginLinkRequest = LoginLinkRequest.extend({
  purpose: enumFilter.purpose.optional(),
  notification_settings: NotificationSettings.extend({
    custom_subject: text(CUSTOM_SUBJECT_MAX_CHARACTERS).optional(),
    custom_message: multilineText(CUSTOM_MESSAGE_MAX_CHARACTERS).optional(),
  }).optional(),
});

export const NOTIFICATION_DEFAULTS = {
  partner_branded: false,
  custom_subject: 'Your secure login link',
  include_instructions: true,
} as const;

const page = {
  limit: integer(PAGE_SIZE.min, PAGE_SIZE.max).optional(),
  offset: integer(0, OFFSET_MAX, `an integer from 0 to ${OFFSET_MAX}`).optional(),
};
const taxYear = integer(TAX_YEAR.min, TAX_YEAR.max, 'a year of four digits');
/** The mock's own range of years (its choice: the contract says only "a year"). */
const mockTaxYear = integer(MOCK_TAX_YEAR.min, MOCK_TAX_YEAR.max, `a year from ${MOCK_TAX_YEAR.min} to ${MOCK_TAX_YEAR.max}`);

/** Query strings: unknown parameters are ignored, as HTTP caches and proxies may add their own. */
export const DocumentListQuery = z.object({ tax_year: taxYear.optional(), ...page });
export const ProjectListQuery = z.object({
  tax_year: taxYear.optional(),
  type: enumFilter.projectType.optional(),
  status: enumFilter.projectStatus.optional(),
});
export const DeliverableListQuery = z.object({
  status: enumFilter.deliverableStatus.optional(),
  account_id: pathId.optional(),
  project_type: enumFilter.projectType.optional(),
  ...page,
});
export type DocumentListQuery = z.input<typeof DocumentListQuery>;
export type ProjectListQuery = z.input<typeof ProjectListQuery>;
export type DeliverableListQuery = z.input<typeof DeliverableListQuery>;
/** The list queries as the mock takes them: its own range of years. */
export const MockDocumentListQuery = DocumentListQuery.extend({ tax_year: mockTaxYear.optional() });
export const MockProjectListQuery = ProjectListQuery.extend({ tax_year: mockTaxYear.optional() });

/**
 * The text fields of the multipart upload; `file` is checked by the upload handler as it streams.
 * The contract shows no length for the description: the client sends any, the service decides.
 */
export const DocumentUploadFields = z.strictObject({
  tax_year: taxYear,
  description: multilineText().optional(),
});
export type DocumentUploadFields = z.input<typeof DocumentUploadFields>;

/** What the mock takes: a year from 1900 to 2100 and a description of at most 1000 characters (its choices). */
export const MockDocumentUploadFields = DocumentUploadFields.extend({ tax_year: mockTaxYear, description: multilineText(DESCRIPTION_MAX_CHARACTERS).optional() });

export const AccountPath = z.object({ account_id: pathId });
export const DocumentPath = z.object({ document_id: pathId });
export const ProjectPath = z.object({ project_id: pathId });
