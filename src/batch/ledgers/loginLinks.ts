import { randomUUID } from 'node:crypto';
import { LedgerState, defaultPathOf, type LedgerKind, type LineStore } from '../ledger';
import { LOGIN_LINKS_FILE_NAME } from './fileNames';

/**
 * The login-link ledger: what this tool generated, so that cron can renew only what expires and a
 * killed run resumes without generating a link twice (a second link invalidates the emailed one).
 *
 * An `intent` line is made durable before a request is sent, and an `issued` or `refused` line
 * after the answer. An intent without either is *uncertain*: the service may or may not have made
 * a link, and the contract gives no way to ask. Link URLs and tokens are never written: they are
 * credentials, and a ledger needs only expiry times. Writers hold the ledger lock (../lock.ts);
 * readers need none, because lines are appended whole and the file is replaced only by an atomic
 * rename (compaction).
 */
export const LOGIN_LINKS: LedgerKind = {
  label: 'login-link',
  fileName: LOGIN_LINKS_FILE_NAME,
  types: ['intent', 'issued', 'refused', 'run', 'run_end'],
  damagedHint: 'the next renewal then regenerates every link it does not know',
};

/** Where the login-link ledger lives unless `--ledger` says otherwise. */
export function defaultLedgerPath(env: Record<string, string | undefined>, platform: NodeJS.Platform = process.platform): string {
  return defaultPathOf(LOGIN_LINKS, env, platform);
}

/** Who a link is for: `user_email` null means "the primary holder" (no user_email sent). */
export interface LinkTarget {
  origin: string;
  account_id: number;
  user_email: string | null;
}

interface TargetFields extends LinkTarget {
  profile: string | null;
  /** The batch run the line belongs to, when it was part of one. */
  run?: string;
  at: string;
}

export interface IntentEntry extends TargetFields {
  type: 'intent';
  id: string;
}

export interface IssuedLink {
  user_email: string;
  purpose: string;
  expires_at: string;
  created_at: string;
}

export interface IssuedEntry extends TargetFields {
  type: 'issued';
  /** The intent it settles; absent for a link the service returned at account creation (`at_creation`). */
  intent?: string;
  /** The link came with the account (`accounts create`, `accounts import`, a spouse invitation), not from login-link. */
  at_creation?: true;
  link: IssuedLink;
}

export interface RefusedEntry extends TargetFields {
  type: 'refused';
  intent: string;
  code: string;
}

export interface RunEntry {
  type: 'run';
  run: string;
  /** Digest of what the run was asked to do: a re-run of the same batch resumes it. */
  digest: string;
  items: number;
  at: string;
}

export interface RunEndEntry {
  type: 'run_end';
  run: string;
  at: string;
}

export type LedgerEntry = IntentEntry | IssuedEntry | RefusedEntry | RunEntry | RunEndEntry;

interface RunState {
  entry: RunEntry;
  ended: boolean;
  /** Targets the run got a link for (a refused item is worth sending again: nothing was made). */
  issued: Set<string>;
}

function targetKey(target: LinkTarget): string {
  return `${target.origin}|${target.account_id}|${target.user_email?.toLowerCase() ?? ''}`;
}

function userKey(origin: string, accountId: number, userEmail: string): string {
  return `${origin}|${accountId}|${userEmail.toLowerCase()}`;
}

/** The ledger's content, folded from its lines: the last link per user, open intents, runs. */
export class LedgerView extends LedgerState<LedgerEntry> {
  private readonly latestLinks = new Map<string, IssuedEntry>();
  /** The last link requested without user_email per account: it tells who the primary holder is. */
  private readonly primaryLinks = new Map<string, IssuedEntry>();
  private readonly openIntents = new Map<string, IntentEntry>();
  private readonly runs = new Map<string, RunState>();

  constructor(source: LineStore | string) {
    super(source, LOGIN_LINKS);
  }

  protected apply(entry: LedgerEntry): void {
    this.entries.push(entry);
    switch (entry.type) {
      case 'intent':
        this.openIntents.set(targetKey(entry), entry);
        break;
      case 'issued':
      case 'refused': {
        const key = targetKey(entry);
        if (entry.intent !== undefined && this.openIntents.get(key)?.id === entry.intent) this.openIntents.delete(key);
        if (entry.type === 'issued') {
          if (entry.run !== undefined) this.runs.get(entry.run)?.issued.add(key);
          this.latestLinks.set(userKey(entry.origin, entry.account_id, entry.link.user_email), entry);
          if (entry.user_email === null) this.primaryLinks.set(`${entry.origin}|${entry.account_id}`, entry);
        }
        break;
      }
      case 'run':
        this.runs.set(entry.run, { entry, ended: false, issued: new Set() });
        break;
      case 'run_end': {
        const run = this.runs.get(entry.run);
        if (run) run.ended = true;
        break;
      }
    }
  }

  /** The last link generated for the target; for the primary holder, as far as the ledger knows who that is. */
  findLink(target: LinkTarget): IssuedEntry | undefined {
    const email = target.user_email ?? this.primaryLinks.get(`${target.origin}|${target.account_id}`)?.link.user_email;
    return email === undefined ? undefined : this.latestLinks.get(userKey(target.origin, target.account_id, email));
  }

  /** An intent with no answer recorded: the service may or may not have generated that link. */
  uncertainIntent(target: LinkTarget): IntentEntry | undefined {
    return this.openIntents.get(targetKey(target));
  }

  /** Every user's last link, expiring soonest first. */
  links(): IssuedEntry[] {
    return [...this.latestLinks.values()].sort((a, b) => Date.parse(a.link.expires_at) - Date.parse(b.link.expires_at));
  }

  uncertainIntents(): IntentEntry[] {
    return [...this.openIntents.values()];
  }

  /** The latest run with this digest that did not get to its end, and whether it got a link for a target. */
  unfinishedRun(digest: string): { entry: RunEntry; issuedFor(target: LinkTarget): boolean } | undefined {
    const run = [...this.runs.values()].reverse().find((candidate) => candidate.entry.digest === digest && !candidate.ended);
    return run && { entry: run.entry, issuedFor: (target) => run.issued.has(targetKey(target)) };
  }

  /** Lines still needed: the last link per user and per primary holder, open intents, unfinished runs. */
  protected liveEntries(): LedgerEntry[] {
    const latest = new Set<LedgerEntry>([...this.latestLinks.values(), ...this.primaryLinks.values(), ...this.openIntents.values()]);
    const unfinished = new Set([...this.runs.values()].filter((run) => !run.ended).map((run) => run.entry.run));
    return this.entries.filter((entry) => {
      if (latest.has(entry)) return true;
      if (entry.type === 'run') return unfinished.has(entry.run);
      if (entry.type === 'issued') return entry.run !== undefined && unfinished.has(entry.run);
      return false;
    });
  }
}

/** Reads a ledger without changing it (listing, dry runs). */
export function readLedger(source: LineStore | string): Promise<LedgerView> {
  return new LedgerView(source).read();
}

/** The login-link ledger opened for writing, by the holder of its lock; appends are durable when they resolve (see `LedgerAppender`). */
export class Ledger extends LedgerView {
  static async open(source: LineStore | string): Promise<Ledger> {
    const ledger = await new Ledger(source).read();
    await ledger.openForAppend();
    return ledger;
  }

  /** Records that a link is about to be requested; durable before it resolves. Returns the intent id. */
  async recordIntent(target: LinkTarget, meta: { profile: string | null; run?: string; at: Date }): Promise<string> {
    const id = randomUUID();
    await this.append({ type: 'intent', id, ...target, profile: meta.profile, ...(meta.run ? { run: meta.run } : {}), at: meta.at.toISOString() });
    return id;
  }

  async recordIssued(intent: string, target: LinkTarget, link: IssuedLink, meta: { profile: string | null; run?: string; at: Date }): Promise<void> {
    await this.append({ type: 'issued', intent, ...target, profile: meta.profile, ...(meta.run ? { run: meta.run } : {}), at: meta.at.toISOString(), link });
  }

  /**
   * Links the service returned with new accounts: recorded so that renewal knows them valid until
   * their expiry and does not replace what the client was just sent. No intent precedes them (the
   * request was an account creation); the link itself is not kept, as for every other line.
   */
  async recordCreationLinks(links: ReadonlyArray<{ target: LinkTarget; link: IssuedLink }>, meta: { profile: string | null; at: Date }): Promise<void> {
    // Appended together: the appender writes them in one durable batch.
    await Promise.all(links.map(({ target, link }) => this.append({ type: 'issued', at_creation: true, ...target, profile: meta.profile, at: meta.at.toISOString(), link })));
  }

  /** The service provably made no link (a 4xx answer, or no connection at all): the intent is settled. */
  async recordRefused(intent: string, target: LinkTarget, code: string, meta: { profile: string | null; run?: string; at: Date }): Promise<void> {
    await this.append({ type: 'refused', intent, ...target, profile: meta.profile, ...(meta.run ? { run: meta.run } : {}), at: meta.at.toISOString(), code });
  }

  async startRun(digest: string, items: number, at: Date): Promise<string> {
    const run = randomUUID();
    await this.append({ type: 'run', run, digest, items, at: at.toISOString() });
    return run;
  }

  async endRun(run: string, at: Date): Promise<void> {
    await this.append({ type: 'run_end', run, at: at.toISOString() });
  }
}
