import * as z from 'zod';
import { EXPIRY_HOURS, LoginLinkRequest, integer } from '../../contract';
import { UsageError } from '../../errors';
import { durationRule, parseDuration } from '../../lib/duration';
import { definedOnly, flagConflict, parseWithFlags, type FlagNames } from '../parseFlags';

/** The request body fields that flags set for every link of a run (per-item fields come from the input). */
export type LinkRequestDefaults = Omit<LoginLinkRequest, 'user_email'> & { user_email?: string };

/** Flags shared by `login-link` and `login-link renew`. */
export interface RunFlags {
  request: LinkRequestDefaults;
  concurrency: number;
  /** `--ledger PATH`; undefined: the user's data directory. */
  ledgerPath: string | undefined;
  lockWaitMs: number;
  reissueUncertain: boolean;
}

const FLAG_NAMES: FlagNames = {
  user_email: '--user-email',
  expiry_hours: '--expiry-hours',
  purpose: '--purpose',
  redirect_url: '--redirect-url',
  send_notification: '--no-notify',
  'notification_settings.partner_branded': '--partner-branded',
  'notification_settings.custom_subject': '--custom-subject',
  'notification_settings.custom_message': '--custom-message',
  'notification_settings.include_instructions': '--no-instructions',
  concurrency: '--concurrency',
  lock_wait: '--lock-wait',
};

export const DEFAULT_CONCURRENCY = 4;
export const MAX_CONCURRENCY = 16;
export const DEFAULT_LOCK_WAIT_SECONDS = 5;

/**
 * The service checks `expiry_hours` range and the redirect domain itself (with codes of their
 * own); the CLI refuses what can never pass before sending anything: a range or type the contract
 * rules out, and a redirect that is not an absolute HTTPS URL.
 */
const RequestFlags = LoginLinkRequest.extend({
  expiry_hours: integer(EXPIRY_HOURS.min, EXPIRY_HOURS.max).optional(),
  redirect_url: z
    .string()
    .refine((value) => URL.canParse(value) && new URL(value).protocol === 'https:', 'must be an absolute https:// URL')
    .optional(),
});

const RunLimits = z.object({
  concurrency: integer(1, MAX_CONCURRENCY),
  lock_wait: integer(0, 3600, 'a whole number of seconds from 0 to 3600'),
});

export function parseRunFlags(flags: Record<string, unknown>): RunFlags {
  const notificationSettings = definedOnly({
    partner_branded: flags.partnerBranded === true ? true : undefined,
    custom_subject: flags.customSubject,
    custom_message: flags.customMessage,
    include_instructions: flags.instructions === false ? false : undefined,
  });
  const notify = flags.notify !== false;
  if (!notify && Object.keys(notificationSettings).length > 0) {
    throw flagConflict('--no-notify sends no email, so --partner-branded, --custom-subject, --custom-message and --no-instructions would have no effect; drop one side');
  }
  const request = parseWithFlags(
    RequestFlags,
    definedOnly({
      user_email: flags.userEmail,
      expiry_hours: flags.expiryHours,
      purpose: flags.purpose,
      redirect_url: flags.redirectUrl,
      send_notification: notify ? undefined : false,
      notification_settings: Object.keys(notificationSettings).length > 0 ? notificationSettings : undefined,
    }),
    FLAG_NAMES,
  );
  const limits = parseWithFlags(RunLimits, { concurrency: flags.concurrency ?? DEFAULT_CONCURRENCY, lock_wait: flags.lockWait ?? DEFAULT_LOCK_WAIT_SECONDS }, FLAG_NAMES);
  return {
    request: definedOnly(request) as LinkRequestDefaults,
    concurrency: limits.concurrency,
    ledgerPath: typeof flags.ledger === 'string' ? flags.ledger : undefined,
    lockWaitMs: limits.lock_wait * 1000,
    reissueUncertain: flags.reissueUncertain === true,
  };
}

/** `--within 24h`: a duration with a unit (src/lib/duration.ts); returns milliseconds. */
export function parseWindow(value: unknown, flag: string): number {
  const ms = typeof value === 'string' ? parseDuration(value) : undefined;
  const rule = `must be ${durationRule()}, greater than 0`;
  if (ms === undefined || ms < 1) throw new UsageError(`${flag} ${rule} (got ${JSON.stringify(String(value))})`, { details: { [flag]: [rule] } });
  return ms;
}
