import { CommanderError } from 'commander';
import { describe, expect, it } from 'vitest';
import { buildProgram } from '../../src/cli';
import * as createModule from '../../src/commands/login-link/create';
import * as ledgerModule from '../../src/commands/login-link/ledger';
import * as renewModule from '../../src/commands/login-link/renew';
import type { Dispatch } from '../../src/commands/types';
import { UsageError } from '../../src/errors';

/** Parses argv with the real command tree and returns what the chosen module's parseOptions made of it. */
async function optionsFor(argv: string[]): Promise<{ module: string; options: Record<string, unknown> }> {
  let captured: { module: string; options: Record<string, unknown> } | undefined;
  const dispatch: Dispatch = async (load, raw) => {
    const module = await load();
    const name = new Map<unknown, string>([[createModule, 'create'], [renewModule, 'renew'], [ledgerModule, 'ledger']]).get(module) ?? 'other';
    captured = { module: name, options: module.parseOptions(raw) as Record<string, unknown> };
  };
  const program = buildProgram(dispatch, { writeOut: () => undefined, writeErr: () => undefined });
  await program.parseAsync(argv, { from: 'user' });
  if (!captured) throw new Error('no command ran');
  return captured;
}

const base = { concurrency: 4, ledgerPath: undefined, lockWaitMs: 5000, reissueUncertain: false, yes: false };

describe('login-link flags -> options', () => {
  it.each<[string[], Record<string, unknown>]>([
    [['login-link', '1001'], { ...base, request: {}, items: [{ origin: 'argument 1', account_id: 1001 }], from: undefined, restart: false }],
    [
      ['login-link', '1001', '--user-email', 'jane@example.com', '--expiry-hours', '48', '--purpose', 'support_request', '--redirect-url', 'https://acme.example/after'],
      {
        ...base,
        request: { user_email: 'jane@example.com', expiry_hours: 48, purpose: 'support_request', redirect_url: 'https://acme.example/after' },
        items: [{ origin: 'argument 1', account_id: 1001 }],
        from: undefined,
        restart: false,
      },
    ],
    [
      ['login-link', '1001', '--partner-branded', '--custom-subject', 'Hello', '--custom-message', 'Welcome', '--no-instructions'],
      {
        ...base,
        request: { notification_settings: { partner_branded: true, custom_subject: 'Hello', custom_message: 'Welcome', include_instructions: false } },
        items: [{ origin: 'argument 1', account_id: 1001 }],
        from: undefined,
        restart: false,
      },
    ],
    [['login-link', '1001', '--no-notify'], { ...base, request: { send_notification: false }, items: [{ origin: 'argument 1', account_id: 1001 }], from: undefined, restart: false }],
    [
      ['login-link', '--from', 'clients.csv', '--concurrency', '8', '--ledger', '/tmp/l.ndjson', '--lock-wait', '0', '--reissue-uncertain', '--restart'],
      { concurrency: 8, ledgerPath: '/tmp/l.ndjson', lockWaitMs: 0, reissueUncertain: true, yes: false, request: {}, items: undefined, from: 'clients.csv', restart: true },
    ],
    [['login-link', '1001', '-y'], { ...base, yes: true, request: {}, items: [{ origin: 'argument 1', account_id: 1001 }], from: undefined, restart: false }],
    [['--json', 'login-link', '1', '2'], { ...base, request: {}, items: [{ origin: 'argument 1', account_id: 1 }, { origin: 'argument 2', account_id: 2 }], from: undefined, restart: false }],
  ])('%j', async (argv, expected) => {
    const { module, options } = await optionsFor(argv);
    expect(module).toBe('create');
    expect(options).toEqual(expected);
  });

  it('dispatches renew and ledger as subcommands, their flags not taken by the parent', async () => {
    expect(await optionsFor(['login-link', 'renew', '--from', 'c.csv', '--within', '36h', '--dry-run', '--expiry-hours', '72'])).toEqual({
      module: 'renew',
      options: { ...base, request: { expiry_hours: 72 }, from: 'c.csv', withinMs: 36 * 3_600_000, dryRun: true, renewUnknown: false, skipInvalid: false },
    });
    expect(await optionsFor(['login-link', 'renew', '--from', '-'])).toMatchObject({ module: 'renew', options: { withinMs: 24 * 3_600_000, dryRun: false, yes: false } });
    expect(await optionsFor(['login-link', 'renew', '--from', '-', '--yes'])).toMatchObject({ module: 'renew', options: { yes: true } });
    expect(await optionsFor(['login-link', 'renew', '--from', '-', '--within', '500ms'])).toMatchObject({ options: { withinMs: 500 } });
    expect(await optionsFor(['login-link', 'renew', '--from', '-', '--within', '1d12h'])).toMatchObject({ options: { withinMs: 36 * 3_600_000 } });
    expect(await optionsFor(['login-link', 'ledger', '--ledger', 'x.ndjson'])).toEqual({ module: 'ledger', options: { ledgerPath: 'x.ndjson' } });
  });
});

it('sends a purpose the contract does not list: whether the service refuses one is not shown', async () => {
  expect(await optionsFor(['login-link', '1001', '--purpose', 'onboarding_call'])).toMatchObject({ options: { request: { purpose: 'onboarding_call' } } });
});

describe('login-link flags refused locally', () => {
  it.each<[string[], string]>([
    [['login-link'], 'give one or more account ids, or --from FILE (- for stdin)'],
    [['login-link', '1', '--from', 'f'], 'give account ids or --from FILE, not both'],
    [['login-link', '1001', '--expiry-hours', '0'], '--expiry-hours must be an integer from 1 to 168'],
    [['login-link', '1001', '--expiry-hours', '2.5'], '--expiry-hours must be an integer from 1 to 168'],
    [['login-link', '1001', '--purpose', 'a\u0007b'], '--purpose must not contain control characters'],
    [['login-link', '1001', '--redirect-url', 'http://acme.example/'], '--redirect-url must be an absolute https:// URL'],
    [['login-link', '1001', '--user-email', 'nope'], '--user-email must be a valid email address'],
    [['login-link', '1001', '--custom-subject', 'a\u0007b'], '--custom-subject must not contain control characters'],
    [['login-link', '1001', '--no-notify', '--custom-subject', 'Hi'], '--no-notify sends no email'],
    [['login-link', '1', '2', '--user-email', 'a@b.co'], '--user-email names a user of one account'],
    [['login-link', '--from', 'c.csv', '--user-email', 'a@b.co'], '--user-email names a user of one account'],
    [['login-link', '1', '2', '--concurrency', '17'], '--concurrency must be an integer from 1 to 16'],
    [['login-link', 'abc'], 'argument 1: account_id must be a positive integer'],
    [['login-link', 'renew'], '--from FILE is required'],
    [['login-link', 'renew', '--from', 'f', '--within', 'soon'], '--within must be a duration such as 500ms, 30s, 90m, 24h, 7d or 1h30m, greater than 0'],
    [['login-link', 'renew', '--from', 'f', '--within', '24'], '--within must be a duration'],
    [['login-link', 'renew', '--from', 'f', '--within', '0h'], '--within must be a duration'],
  ])('%j', async (argv, message) => {
    const error = await optionsFor(argv).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(UsageError);
    expect((error as UsageError).message).toContain(message);
    expect((error as UsageError).exitCode).toBe(2);
  });

  it.each<[string[], string]>([
    [['login-link', 'ledger', '--purpose', 'bogus'], "unknown option '--purpose'"],
    [['login-link', 'ledger', '--from', 'x.csv'], "unknown option '--from'"],
    [['login-link', 'renew', '--from', 'x.csv', '--user-email', 'a@b.co'], "unknown option '--user-email'"],
    [['login-link', 'renew', '--from', 'x.csv', '--restart'], "unknown option '--restart'"],
    [['login-link', 'ledger', '--ledgr', 'x'], "unknown option '--ledgr'\n(Did you mean --ledger?)"],
  ])('a subcommand takes only its own flags: %j', async (argv, message) => {
    const error = await optionsFor(argv).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(CommanderError);
    expect((error as CommanderError).message).toBe(`error: ${message}`);
  });

  it('the help of renew and ledger lists their own flags, not those of login-link', () => {
    const loginLink = buildProgram(async () => undefined).commands.find((command) => command.name() === 'login-link')!;
    const helpOf = (name: string) => loginLink.commands.find((command) => command.name() === name)!.helpInformation();
    // The command's own FLAGS section; the program's flags follow under INHERITED FLAGS.
    const flagsIn = (text: string) => [...(/^FLAGS\n([\s\S]*?)\n\n/m.exec(text)?.[1] ?? '').matchAll(/^ {2}(--[\w-]+)/gm)].map((match) => match[1]);
    expect(flagsIn(helpOf('ledger'))).toEqual(['--ledger']);
    expect(flagsIn(helpOf('renew'))).toEqual(expect.arrayContaining(['--from', '--within', '--dry-run', '--purpose', '--expiry-hours']));
    expect(flagsIn(helpOf('renew'))).not.toContain('--user-email');
    expect(helpOf('renew')).not.toContain('Global Options');
    // Links the ledgers do not know are replaced only when a person says yes or --renew-unknown.
    expect(loginLink.helpInformation()).not.toContain('does not know or that expire soon');
    expect(loginLink.helpInformation()).toContain('renew');
    expect(helpOf('renew')).toContain('Regenerate the links that expire soon (for cron); unknown ones only when told to');
  });

  it('leaves unknown flags to commander (exit 2 in main)', async () => {
    await expect(optionsFor(['login-link', '1', '--expiry', '3'])).rejects.toBeInstanceOf(CommanderError);
  });
});
