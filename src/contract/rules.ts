import * as z from 'zod';
import { EMAIL_MAX_LENGTH, NAME_MAX_CHARACTERS } from './vocabulary';

export {
  ACCOUNT_LOGIN_LINK_DAYS,
  CUSTOM_MESSAGE_MAX_CHARACTERS,
  CUSTOM_SUBJECT_MAX_CHARACTERS,
  DESCRIPTION_MAX_CHARACTERS,
  EMAIL_MAX_LENGTH,
  EXPIRY_HOURS,
  NAME_MAX_CHARACTERS,
  OFFSET_MAX,
  PAGE_SIZE,
  MOCK_TAX_YEAR,
  TAX_YEAR,
} from './vocabulary';

/**
 * Field rules of the contract, written once and used by the mock (to validate requests), the CLI
 * (to refuse bad input before any request) and the docs. Every message names the rule so that
 * `field: message` reads as a sentence.
 */

/** Characters as a person counts them: Unicode code points after NFC normalisation, not UTF-16 units. */
export function characterCount(value: string): number {
  let count = 0;
  for (const _ of value.normalize('NFC')) count += 1;
  return count;
}

function typeMessage(expected: string) {
  return (issue: { input?: unknown }) => (issue.input === undefined ? 'is required' : `must be ${expected}`);
}

/**
 * Characters that no text of the service may hold: C0 controls (NUL included), DEL, C1 controls,
 * and the bidirectional embeddings, overrides and isolates, which make a name display as another.
 * Multi-line text may hold tabs and line breaks. Written as whole-string patterns (not as
 * refinements) so that the OpenAPI document states them as `pattern`, the rule the mock applies.
 */
const LINE_WITHOUT_CONTROLS = /^[^\u0000-\u001F\u007F-\u009F\u202A-\u202E\u2066-\u2069]*$/;
const TEXT_WITHOUT_CONTROLS = /^[^\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F\u202A-\u202E\u2066-\u2069]*$/;

/**
 * Text without `forbidden` characters; at most `maxCharacters` when a limit is given (none: the
 * contract shows none). The limit counts characters after NFC normalisation, as a person does:
 * JSON Schema's `maxLength` counts code points as sent, so the document adds `x-max-characters-nfc`.
 */
function boundedText(maxCharacters: number | undefined, allowed: RegExp, rule: string) {
  const free = z.string({ error: typeMessage('a string') }).regex(allowed, rule);
  if (maxCharacters === undefined) return free;
  return free
    .refine((value) => characterCount(value) <= maxCharacters, `must be at most ${maxCharacters} characters`)
    .meta({ maxLength: maxCharacters, 'x-max-characters-nfc': maxCharacters });
}

/** One line of text: no control characters at all. */
export function text(maxCharacters?: number) {
  return boundedText(maxCharacters, LINE_WITHOUT_CONTROLS, 'must not contain control characters (such as NUL, tabs or line breaks) or bidirectional overrides');
}

/** Text that may run over several lines (tabs and line breaks allowed), but holds no other control character. */
export function multilineText(maxCharacters?: number) {
  return boundedText(maxCharacters, TEXT_WITHOUT_CONTROLS, 'must not contain control characters (such as NUL) or bidirectional overrides; tabs and line breaks are fine');
}

/**
 * Not blank: at least one character that is not white space as `String.prototype.trim` sees it,
 * spelt out rather than `\S` so that every regex engine reading the document agrees.
 */
const NOT_BLANK = /[^\t\n\v\f\r \u00A0\u1680\u2000-\u200A\u2028\u2029\u202F\u205F\u3000\uFEFF]/;

export const personName = text(NAME_MAX_CHARACTERS).regex(NOT_BLANK, 'must not be blank').meta({ minLength: 1 });

/**
 * A practical email rule (local@domain.tld, no spaces, one @), the same on both sides of the wire:
 * the local part neither starts with a dot nor holds two in a row.
 */
const EMAIL_LOCAL = "[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]";
const EMAIL_LABEL = '[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?';
const EMAIL_PATTERN = new RegExp(`^${EMAIL_LOCAL}(?:\\.?${EMAIL_LOCAL})*\\.?@${EMAIL_LABEL}(?:\\.${EMAIL_LABEL})*\\.[A-Za-z]{2,63}$`);

export const email = z
  .string({ error: typeMessage('a string') })
  .max(EMAIL_MAX_LENGTH, `must be at most ${EMAIL_MAX_LENGTH} characters`)
  .regex(EMAIL_PATTERN, 'must be a valid email address');

export const boolean = z.boolean({ error: typeMessage('true or false') });

/**
 * An integer that arrives as a JSON number, or as a decimal string in a query or form field.
 * `rule` finishes the sentence "must be ...".
 */
export function integer(min: number, max: number, rule = `an integer from ${min} to ${max}`) {
  return z
    .union([z.number(), z.string()], { error: typeMessage(rule) })
    .transform((value, ctx) => {
      const parsed = typeof value === 'number' ? value : /^-?\d{1,16}$/.test(value.trim()) ? Number(value.trim()) : NaN;
      if (!Number.isInteger(parsed) || parsed < min || parsed > max) {
        ctx.addIssue({ code: 'custom', message: `must be ${rule}` });
        return z.NEVER;
      }
      return parsed;
    })
    // For the OpenAPI document (`openapi.ts`): what the rule admits, as JSON Schema says it.
    .meta({ type: 'integer', minimum: min, maximum: max });
}

export function oneOf<const T extends readonly [string, ...string[]]>(values: T) {
  return z.enum(values, { error: `must be one of: ${values.join(', ')}` });
}

/** An id as text: decimal digits without sign, leading zeros, spaces or exponent, so each id has exactly one spelling. */
export const CANONICAL_ID = /^[1-9][0-9]{0,15}$/;

/**
 * An identifier (in a path, a query or an argument): a positive integer, as a JSON number or in
 * its one canonical spelling, so `/accounts/01001` or `/accounts/1001%20` never names account 1001.
 */
export const pathId = z.union([z.number(), z.string()], { error: typeMessage('a positive integer') }).transform((value, ctx) => {
  const parsed = typeof value === 'number' ? value : CANONICAL_ID.test(value) ? Number(value) : NaN;
  if (Number.isSafeInteger(parsed) && parsed >= 1) return parsed;
  // `01001`, `+1001`, `1e3`, ` 1001`: a positive integer, but not as an id is written.
  const misspelt = typeof value === 'string' && value.trim() !== '' && Number.isSafeInteger(Number(value)) && Number(value) >= 1;
  ctx.addIssue({
    code: 'custom',
    message: misspelt ? 'must be a positive integer written plainly, such as 1001 (no sign, leading zeros, spaces or exponent)' : 'must be a positive integer',
  });
  return z.NEVER;
}).meta({ type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER });

/**
 * Field path -> messages, the shape of `VALIDATION_ERROR` details. Nested fields are dotted (`spouse.email`).
 * Field names come from the request, so they may be any string, `constructor` or `__proto__`
 * included: add to it only with `addFieldError`.
 */
export type FieldErrors = Record<string, string[]>;

/** Adds `message` under `field` (once), as an own property whatever the name: never through an inherited member or the prototype setter. */
export function addFieldError(errors: FieldErrors, field: string, message: string): void {
  if (!Object.hasOwn(errors, field)) {
    Object.defineProperty(errors, field, { value: [message], enumerable: true, writable: true, configurable: true });
    return;
  }
  const messages = errors[field]!;
  if (!messages.includes(message)) messages.push(message);
}

export function fieldErrors(error: z.ZodError): FieldErrors {
  const result: FieldErrors = {};
  const add = (path: PropertyKey[], message: string) => addFieldError(result, path.length > 0 ? path.map(String).join('.') : 'body', message);
  for (const issue of error.issues) {
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) add([...issue.path, key], 'is not a field of this request');
    } else {
      add(issue.path, issue.message);
    }
  }
  return result;
}

/** One line per field, for messages: `spouse.email must be a valid email address`. */
export function describeFieldErrors(errors: FieldErrors): string {
  return Object.entries(errors)
    .map(([field, messages]) => `${field} ${messages.join('; ')}`)
    .join('; ');
}
