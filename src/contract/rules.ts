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
  TAX_YEAR,
} from './vocabulary';

/**
 * Field rules of the contract, written once and used by the mock (to validate requests), the CLI
 * (to refuse bad input before any request) and the README. Every message names the rule so that
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

export function text(maxCharacters: number) {
  return z
    .string({ error: typeMessage('a string') })
    .refine((value) => characterCount(value) <= maxCharacters, `must be at most ${maxCharacters} characters`);
}

export const personName = text(NAME_MAX_CHARACTERS).refine((value) => value.trim().length > 0, 'must not be blank');

// A practical email rule (local@domain.tld, no spaces, one @), the same on both sides of the wire.
const EMAIL_PATTERN = /^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.[A-Za-z]{2,63}$/;

export const email = z
  .string({ error: typeMessage('a string') })
  .max(EMAIL_MAX_LENGTH, `must be at most ${EMAIL_MAX_LENGTH} characters`)
  .regex(EMAIL_PATTERN, 'must be a valid email address')
  .refine((value) => !value.split('@')[0]!.startsWith('.') && !value.includes('..'), 'must be a valid email address');

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
    });
}

export function oneOf<const T extends readonly [string, ...string[]]>(values: T) {
  return z.enum(values, { error: `must be one of: ${values.join(', ')}` });
}

/** A path identifier: a positive decimal integer. */
export const pathId = integer(1, Number.MAX_SAFE_INTEGER, 'a positive integer');

/** Field path -> messages, the shape of `VALIDATION_ERROR` details. Nested fields are dotted (`spouse.email`). */
export type FieldErrors = Record<string, string[]>;

export function fieldErrors(error: z.ZodError): FieldErrors {
  const result: FieldErrors = {};
  const add = (path: PropertyKey[], message: string) => {
    const field = path.length > 0 ? path.map(String).join('.') : 'body';
    const messages = (result[field] ??= []);
    if (!messages.includes(message)) messages.push(message);
  };
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
