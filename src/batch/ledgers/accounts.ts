import { randomUUID } from 'node:crypto';
import { LedgerState, type LedgerKind, type LineStore } from '../ledger';
import { ACCOUNTS_FILE_NAME } from './fileNames';

/**
 * The accounts ledger: which accounts this tool created (`accounts create`, `accounts import`) or
 * found already there (a 409 naming the partner's own account), per service and email, so that an
 * import run again after a kill skips what it made and `status` knows whose accounts to follow.
 *
 * An `intent` line is durable before a create is sent; `created` or `exists` (with the account id)
 * or `refused` (the service provably made nothing) settles it. An intent left open is uncertain:
 * the account may exist. Unlike a login link, sending it again is safe: the service's 409
 * DUPLICATE_EMAIL with `existing_account_id` resolves it, so no account is made twice.
 * Login links returned at creation are credentials and never go here.
 */
export const ACCOUNTS: LedgerKind = {
  label: 'accounts',
  fileName: ACCOUNTS_FILE_NAME,
  types: ['intent', 'created', 'exists', 'refused'],
  damagedHint: 'the next import then asks the service about every row again, and its 409s name the accounts already there',
};

/** Which command made an account known: `create` or `import`. */
export type AccountSource = 'create' | 'import';

interface EmailFields {
  /** The service origin (`https://api.example.com`): the same email at another service is another account. */
  origin: string;
  /** The primary holder's email as sent. */
  email: string;
  profile: string | null;
  at: string;
}

export interface AccountIntentEntry extends EmailFields {
  type: 'intent';
  id: string;
}

/** The service made the account (`created`), or said it already was one of ours (`exists`). */
export interface KnownAccountEntry extends EmailFields {
  type: 'created' | 'exists';
  /** The intent it settles; absent for `accounts create`, which sends without one. */
  intent?: string;
  account_id: number;
  source: AccountSource;
}

export interface AccountRefusedEntry extends EmailFields {
  type: 'refused';
  intent: string;
  code: string;
}

export type AccountsLedgerEntry = AccountIntentEntry | KnownAccountEntry | AccountRefusedEntry;

function emailKey(origin: string, email: string): string {
  return `${origin}|${email.toLowerCase()}`;
}

/** The accounts ledger's content, folded from its lines: the account per email, open intents. */
export class AccountsLedgerView extends LedgerState<AccountsLedgerEntry> {
  private readonly known = new Map<string, KnownAccountEntry>();
  private readonly openIntents = new Map<string, AccountIntentEntry>();

  constructor(source: LineStore | string) {
    super(source, ACCOUNTS);
  }

  // Folded into the maps only (not kept in `entries`): an import of 10,000 rows holds one line per row, not three.
  protected apply(entry: AccountsLedgerEntry): void {
    const key = emailKey(entry.origin, entry.email);
    if (entry.type === 'intent') {
      this.openIntents.set(key, entry);
      return;
    }
    if (entry.intent !== undefined && this.openIntents.get(key)?.id === entry.intent) this.openIntents.delete(key);
    if (entry.type !== 'refused') this.known.set(key, entry);
  }

  /** The account the ledger knows for this email at this service. */
  findAccount(origin: string, email: string): KnownAccountEntry | undefined {
    return this.known.get(emailKey(origin, email));
  }

  /** Every account the ledger knows, in the order they became known. */
  accounts(): KnownAccountEntry[] {
    return [...this.known.values()];
  }

  /** A create sent without an answer recorded: the account may exist (a re-send resolves it by 409). */
  uncertainIntent(origin: string, email: string): AccountIntentEntry | undefined {
    return this.openIntents.get(emailKey(origin, email));
  }

  uncertainIntents(): AccountIntentEntry[] {
    return [...this.openIntents.values()];
  }

  /** Lines still needed: the last known account per email, and open intents (they concern different rows, so their order is free). */
  protected liveEntries(): AccountsLedgerEntry[] {
    return [...this.known.values(), ...this.openIntents.values()];
  }
}

/** Reads the accounts ledger without changing it (a dry run, `status`). */
export function readAccountsLedger(source: LineStore | string): Promise<AccountsLedgerView> {
  return new AccountsLedgerView(source).read();
}

/** The accounts ledger opened for writing, by the holder of its lock; appends are durable when they resolve. */
export class AccountsLedger extends AccountsLedgerView {
  static async open(source: LineStore | string): Promise<AccountsLedger> {
    const ledger = await new AccountsLedger(source).read();
    await ledger.openForAppend();
    return ledger;
  }

  /** Records that an account is about to be created; durable before it resolves. Returns the intent id. */
  async recordIntent(fields: Omit<EmailFields, 'at'> & { at: Date }): Promise<string> {
    const id = randomUUID();
    await this.append({ type: 'intent', id, ...fields, at: fields.at.toISOString() });
    return id;
  }

  /**
   * The account exists at the service: made now (`created`) or before (`exists`, from a 409 with
   * its id). An import does not wait for this line to reach the disk (`wait: false`): lost with a
   * crash, it leaves the intent open, and the next run's 409 names the account again.
   */
  async recordAccount(
    type: KnownAccountEntry['type'],
    fields: Omit<EmailFields, 'at'> & { at: Date; account_id: number; source: AccountSource; intent?: string },
    options: { wait?: boolean } = {},
  ): Promise<void> {
    const { intent, ...rest } = fields;
    await this.append({ type, ...(intent === undefined ? {} : { intent }), ...rest, at: fields.at.toISOString() }, options);
  }

  /** The service provably made no account (a 4xx answer, or no connection at all): the intent is settled. */
  async recordRefused(intent: string, fields: Omit<EmailFields, 'at'> & { at: Date; code: string }): Promise<void> {
    await this.append({ type: 'refused', intent, ...fields, at: fields.at.toISOString() });
  }
}
