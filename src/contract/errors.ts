import * as z from 'zod';

/**
 * Every error code of the service with its HTTP status. The first block is the contract's own;
 * the second holds the codes this project chose where the contract says "not shown" (see
 * docs/contract-notes.md).
 */
export const ERROR_STATUS = {
  VALIDATION_ERROR: 400,
  INVALID_PARAMETERS: 400,
  INVALID_EXPIRY: 400,
  INVALID_REDIRECT_URL: 400,
  INVALID_API_KEY: 401,
  EXPIRED_API_KEY: 401,
  INSUFFICIENT_PERMISSIONS: 403,
  ACCESS_DENIED: 403,
  ACCOUNT_SUSPENDED: 403,
  ACCOUNT_NOT_FOUND: 404,
  USER_NOT_FOUND: 404,
  DELIVERABLE_NOT_FOUND: 404,
  DUPLICATE_EMAIL: 409,
  RATE_LIMIT_EXCEEDED: 429,

  INVALID_JSON: 400,
  DOCUMENT_NOT_FOUND: 404,
  PROJECT_NOT_FOUND: 404,
  NOT_FOUND: 404,
  DELIVERABLE_EXISTS: 409,
  METHOD_NOT_ALLOWED: 405,
  REQUEST_TIMEOUT: 408,
  PAYLOAD_TOO_LARGE: 413,
  URI_TOO_LONG: 414,
  UNSUPPORTED_MEDIA_TYPE: 415,
  HEADERS_TOO_LARGE: 431,
  INTERNAL_ERROR: 500,
  SERVICE_UNAVAILABLE: 503,
  INSUFFICIENT_STORAGE: 507,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

const id = z.union([z.number(), z.string()]);

/** What `error.details` holds for each code that has details. */
export const ERROR_DETAILS = {
  VALIDATION_ERROR: z.record(z.string(), z.array(z.string())),
  INVALID_PARAMETERS: z.record(z.string(), z.array(z.string())),
  INVALID_EXPIRY: z.object({ provided_hours: z.unknown(), min_hours: z.number(), max_hours: z.number() }),
  INVALID_REDIRECT_URL: z.object({ provided_url: z.string(), permitted_domains: z.array(z.string()) }),
  INVALID_API_KEY: z.object({ hint: z.string() }).partial(),
  INSUFFICIENT_PERMISSIONS: z.object({ required_permission: z.string() }),
  ACCESS_DENIED: z.union([
    z.object({ account_id: id }),
    z.object({ project_id: id }),
    z.object({ document_id: id }),
  ]),
  ACCOUNT_SUSPENDED: z.object({ account_id: id, status: z.string(), contact_support: z.boolean() }),
  ACCOUNT_NOT_FOUND: z.object({ account_id: id }),
  USER_NOT_FOUND: z.object({ user_email: z.string(), account_id: id }),
  DELIVERABLE_NOT_FOUND: z.object({ project_id: id }),
  DOCUMENT_NOT_FOUND: z.object({ document_id: id }),
  PROJECT_NOT_FOUND: z.object({ project_id: id }),
  // existing_account_id only when the account is the caller's own (docs/contract-notes.md).
  DUPLICATE_EMAIL: z.object({ email: z.string(), existing_account_id: id.optional() }),
  DELIVERABLE_EXISTS: z.object({ project_id: id, deliverable_id: id }),
  RATE_LIMIT_EXCEEDED: z.object({ limit: z.number(), window_seconds: z.number(), reset_at: z.string() }),
  NOT_FOUND: z.object({ method: z.string(), path: z.string() }),
  METHOD_NOT_ALLOWED: z.object({ method: z.string(), allowed_methods: z.array(z.string()) }),
  PAYLOAD_TOO_LARGE: z.object({ max_bytes: z.number() }),
  URI_TOO_LONG: z.object({ max_bytes: z.number() }),
  HEADERS_TOO_LARGE: z.object({ max_bytes: z.number() }),
  UNSUPPORTED_MEDIA_TYPE: z.object({ provided: z.string(), expected: z.array(z.string()) }),
} satisfies Partial<Record<ErrorCode, z.ZodType>>;

export type ErrorDetails<C extends ErrorCode> = C extends keyof typeof ERROR_DETAILS
  ? z.input<(typeof ERROR_DETAILS)[C]>
  : undefined;

/**
 * The error body. Parsed loosely (unknown codes and extra fields are kept) so that a newer service
 * never makes the client fail to report its error.
 */
export const ErrorBody = z.looseObject({
  error: z.looseObject({
    code: z.string(),
    message: z.string(),
    details: z.record(z.string(), z.unknown()).optional(),
  }),
});
export type ErrorBody = z.infer<typeof ErrorBody>;

export function errorBody<C extends ErrorCode>(code: C, message: string, details?: ErrorDetails<C>): ErrorBody {
  return details === undefined ? { error: { code, message } } : { error: { code, message, details: details as Record<string, unknown> } };
}
