import type { z } from 'zod';
import { ERROR_STATUS, errorBody, fieldErrors, type ErrorBody, type ErrorCode, type ErrorDetails } from '../contract';

/** A failure the mock answers with the contract's error body; thrown anywhere, answered by the server. */
export class MockError<C extends ErrorCode = ErrorCode> extends Error {
  readonly status: number;
  constructor(
    readonly code: C,
    message: string,
    readonly details?: ErrorDetails<C>,
    /** Extra response headers (Retry-After on 429, Allow on 405). */
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'MockError';
    this.status = ERROR_STATUS[code];
  }

  body(): ErrorBody {
    return errorBody(this.code, this.message, this.details);
  }
}

/**
 * Parses `input` with `schema`, or throws `code` with field -> messages details. Bodies fail with
 * `VALIDATION_ERROR`, paths and queries with `INVALID_PARAMETERS` (docs/contract-notes.md).
 */
export function parseOrThrow<S extends z.ZodType>(
  schema: S,
  input: unknown,
  code: 'VALIDATION_ERROR' | 'INVALID_PARAMETERS',
): z.output<S> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const details = fieldErrors(result.error);
  const summary = Object.entries(details)
    .map(([field, messages]) => `${field} ${messages.join('; ')}`)
    .join('; ');
  const what = code === 'VALIDATION_ERROR' ? 'The request body is invalid' : 'The request parameters are invalid';
  throw new MockError(code, `${what}: ${summary}.`, details);
}
