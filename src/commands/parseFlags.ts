import type { z } from 'zod';
import { hasApiKeyShape, redactApiKey } from '../contract/apiKeys';
import { fieldErrors, pathId, type FieldErrors } from '../contract/rules';
import { UsageError } from '../errors';
import { fieldsOfFlags, flagOfField, type FlagSpec } from './spec';

/**
 * Flag and argument checks shared by every command: the contract's own zod rules (the ones the
 * mock applies), with each failure reported under the flag or argument the user typed.
 */

const HINT = 'Run the command with --help for its flags and examples.';

function usageError(errors: FieldErrors): UsageError {
  const message = Object.entries(errors)
    .map(([name, messages]) => `${name} ${messages.join('; ')}`)
    .join('; ');
  return new UsageError(message, { details: errors, hint: HINT });
}

/**
 * Checks what the flags declared in `specs` set, as the request fields they map to, with the
 * contract's `schema`; on failure a `UsageError` naming each flag (not the field) and its rule.
 */
export function parseFlagFields<S extends z.ZodType>(schema: S, specs: readonly FlagSpec[], flags: Record<string, unknown>): z.output<S> {
  const result = schema.safeParse(fieldsOfFlags(specs, flags));
  if (result.success) return result.data;
  const flagNames = flagOfField(specs);
  const renamed: FieldErrors = {};
  for (const [field, messages] of Object.entries(fieldErrors(result.error))) {
    (renamed[flagNames[field] ?? field] ??= []).push(...messages);
  }
  throw usageError(renamed);
}

/** A positional identifier (`<account-id>`): a positive integer, as the contract's path rule says. */
export function parseId(value: unknown, argument: string): number {
  const result = pathId.safeParse(value);
  if (result.success) return result.data;
  // A key pasted in the wrong place must not end up in a log in full.
  const given = hasApiKeyShape(String(value)) ? redactApiKey(String(value)) : String(value);
  throw usageError({ [argument]: [`must be a positive integer (got ${JSON.stringify(given)})`] });
}

/** Drops undefined entries, so that an absent flag sends no query parameter or body field. */
export function definedOnly<T extends Record<string, unknown>>(record: T): Partial<T> {
  return Object.fromEntries(Object.entries(record).filter(([, value]) => value !== undefined)) as Partial<T>;
}

/** A plain usage error for rules between flags (which zod schemas of single fields cannot state). */
export function flagConflict(message: string): UsageError {
  return new UsageError(message, { hint: HINT });
}
