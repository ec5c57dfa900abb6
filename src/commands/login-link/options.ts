import * as z from 'zod';
import { EXPIRY_HOURS, LoginLinkRequest, integer } from '../../contract';
import { BATCH_FIELDS, batchFlagsOf, type BatchFlags } from '../../batch/options';
import { UsageError } from '../../errors';
import { bareNumberNote, durationRule, parseDuration } from '../../lib/duration';
import { definedOnly, flagConflict, parseFlagFields } from '../parseFlags';
import { fieldsOfFlags, type FlagSpec } from '../spec';

/** The request body fields that flags set for every link of a run (per-item fields come from the input). */
export type LinkRequestDefaults = Omit<LoginLinkRequest, 'user_email'> & { user_email?: string };

/** Flags shared by `login-link` and `login-link renew`. */
export interface RunFlags extends BatchFlags {
  request: LinkRequestDefaults;
  reissueUncertain: boolean;
  /** `--yes`: act without the terminal's question (src/commands/confirmation.ts). */
  yes: boolean;
}

/**
 * The service checks `expiry_hours` range and the redirect domain itself (with codes of their
 * own); the CLI refuses what can never pass before sending anything: a range or type the contract
 * rules out, and a redirect that is not an absolute HTTPS URL. `concurrency` and `lock_wait` are
 * the run's own limits, sent nowhere.
 */
const RunFields = LoginLinkRequest.extend({
  expiry_hours: integer(EXPIRY_HOURS.min, EXPIRY_HOURS.max).optional(),
  redirect_url: z
    .string()
    .refine((value) => URL.canParse(value) && new URL(value).protocol === 'https:', 'must be an absolute https:// URL')
    .optional(),
  ...BATCH_FIELDS,
});

/** The run flags `specs` declares (those of `login-link` or of `login-link renew`), checked. */
export function parseRunFlags(specs: readonly FlagSpec[], flags: Record<string, unknown>): RunFlags {
  const given = fieldsOfFlags(specs, flags);
  if (given.send_notification === false && given.notification_settings !== undefined) {
    throw flagConflict('--no-notify sends no email, so --partner-branded, --custom-subject, --custom-message and --no-instructions would have no effect; drop one side');
  }
  const { concurrency, lock_wait, ...request } = parseFlagFields(RunFields, specs, flags);
  return {
    request: definedOnly(request) as LinkRequestDefaults,
    ...batchFlagsOf({ concurrency, lock_wait }, flags),
    reissueUncertain: flags.reissueUncertain === true,
    yes: flags.yes === true,
  };
}

/** `--within 24h`: a duration with a unit (src/lib/duration.ts); returns milliseconds. */
export function parseWindow(value: unknown, flag: string): number {
  const ms = typeof value === 'string' ? parseDuration(value) : undefined;
  const rule = `must be ${durationRule()}, greater than 0${typeof value === 'string' ? bareNumberNote(value) : ''}`;
  if (ms === undefined || ms < 1) throw new UsageError(`${flag} ${rule} (got ${JSON.stringify(String(value))})`, { details: { [flag]: [rule] } });
  return ms;
}
