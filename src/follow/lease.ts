import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { LedgerLockedError } from '../errors';
import type { Clock } from '../types';
import type { TeamScope, TeamSql } from '../state/teamSql';

/**
 * The lease that lets exactly one of a team's watches look at a time (a shared store: see
 * docs/team.md). It is one row per namespace and base URL in the store: who holds it, a fencing
 * token, and when it expires on the database's clock (`now()`), so machines whose clocks differ
 * agree on it. The holder renews it every third of its length; a standby polls every sixth and
 * takes over a lease that has expired, which raises the token. Every write of the watch state and
 * of the outbox names the token it holds (`fenced`), and the store refuses it once another took
 * over, so a holder paused past its expiry (SIGSTOP, a VM frozen, a network cut) writes nothing
 * when it wakes.
 */

/** How long a lease lasts unless `watch --lease` says otherwise. */
export const DEFAULT_LEASE_MS = 30_000;
/** The shortest `--lease`: a renewal is a round trip to the database, and a third of it must leave room for a slow one. */
export const MIN_LEASE_MS = 3_000;
/** The longest `--lease`: past it a dead holder leaves the team unwatched for longer than a pass at the default budget. */
export const MAX_LEASE_MS = 600_000;

/**
 * What holds a lease: a `watch`, which takes the requests of hooks commands on any machine while
 * it runs (src/hooks/requests.ts), or a `hooks` command (`hooks deliver`, `redeliver`, `recover`)
 * holding it for its own run, which takes none, so that nobody hands it work.
 */
export type HolderKind = 'watch' | 'hooks';

/** Who holds a lease: enough to find the process, and a random token that no other run shares (two machines may share a host name, a pid recurs). */
export interface LeaseHolder {
  host: string;
  pid: number;
  token: string;
  /** Absent from a lease taken by a taxprep before hooks commands handed work to a watch: not a watch to hand work to. */
  kind?: HolderKind;
}

export function newHolder(kind: HolderKind): LeaseHolder {
  return { host: hostname(), pid: process.pid, token: randomBytes(9).toString('base64url'), kind };
}

/** How often a standby looks whether the lease is free: a sixth of the lease. */
export function standbyPollMs(leaseMs: number): number {
  return Math.round(leaseMs / 6);
}

/** How often the holder renews: a third of the lease, so two renewals may fail before it expires. */
export function renewEveryMs(leaseMs: number): number {
  return Math.round(leaseMs / 3);
}

/** How soon a standby takes over after the holder dies: its lease runs out, then the standby's next poll. */
export function takeoverBoundMs(leaseMs: number): number {
  return leaseMs + standbyPollMs(leaseMs);
}

export interface HeldLease {
  fence: number;
  holder: LeaseHolder;
}

/** The lease as another machine holds it, for a standby's message. */
export interface OtherHolder {
  holder: LeaseHolder;
  expires_at: string;
}

export type TakeResult = { taken: true; lease: HeldLease } | { taken: false; current: OtherHolder };

const LEASE_TABLE = 'taxprep_state.watch_lease';

/**
 * Takes the lease when nobody holds it or its holder's time ran out, in one statement: of two
 * standbys that try at once, the row's lock lets one in and the other finds it taken.
 */
export async function takeLease(sql: TeamSql, scope: TeamScope, holder: LeaseHolder, leaseMs: number): Promise<TakeResult> {
  const taken = await sql.query<{ fence: string }>(
    `INSERT INTO ${LEASE_TABLE} AS lease (namespace, base_url, holder, fence, expires_at, taken_at)
     VALUES ($1, $2, $3, 1, now() + $4 * interval '1 millisecond', now())
     ON CONFLICT (namespace, base_url) DO UPDATE
       SET holder = EXCLUDED.holder, fence = lease.fence + 1, expires_at = EXCLUDED.expires_at, taken_at = EXCLUDED.taken_at
       WHERE lease.expires_at <= now()
     RETURNING fence`,
    [scope.namespace, scope.baseUrl, JSON.stringify(holder), leaseMs],
  );
  if (taken[0] !== undefined) return { taken: true, lease: { fence: Number(taken[0].fence), holder } };
  const current = await sql.query<{ holder: string; expires_at: string }>(
    `SELECT holder, to_json(expires_at) #>> '{}' AS expires_at FROM ${LEASE_TABLE} WHERE namespace = $1 AND base_url = $2`,
    [scope.namespace, scope.baseUrl],
  );
  // Released between the two statements: the next poll takes it.
  if (current[0] === undefined) return { taken: false, current: { holder: { host: '?', pid: 0, token: '' }, expires_at: new Date(0).toISOString() } };
  return { taken: false, current: { holder: JSON.parse(current[0].holder) as LeaseHolder, expires_at: current[0].expires_at } };
}

/** The lease's holder while its lease runs (none: free, or its holder's time ran out), and since when it holds it, on the database's clock. */
export async function currentHolder(sql: TeamSql, scope: TeamScope): Promise<{ holder: LeaseHolder; taken_at: string } | undefined> {
  const rows = await sql.query<{ holder: string; taken_at: string }>(
    `SELECT holder, to_json(taken_at) #>> '{}' AS taken_at FROM ${LEASE_TABLE} WHERE namespace = $1 AND base_url = $2 AND expires_at > now()`,
    [scope.namespace, scope.baseUrl],
  );
  const row = rows[0];
  return row === undefined ? undefined : { holder: JSON.parse(row.holder) as LeaseHolder, taken_at: row.taken_at };
}

/** Renews the lease; false when it was lost (it expired and another took it, or it expired unrenewed). */
export async function renewLease(sql: TeamSql, scope: TeamScope, lease: HeldLease, leaseMs: number): Promise<boolean> {
  const renewed = await sql.query(
    `UPDATE ${LEASE_TABLE} SET expires_at = now() + $4 * interval '1 millisecond'
     WHERE namespace = $1 AND base_url = $2 AND fence = $3 AND expires_at > now()
     RETURNING fence`,
    [scope.namespace, scope.baseUrl, lease.fence, leaseMs],
  );
  return renewed.length > 0;
}

/** Gives the lease up (a watch that ends): a standby takes over at its next poll instead of waiting for the expiry. */
export async function releaseLease(sql: TeamSql, scope: TeamScope, lease: HeldLease): Promise<void> {
  await sql.query(`UPDATE ${LEASE_TABLE} SET expires_at = now() WHERE namespace = $1 AND base_url = $2 AND fence = $3`, [scope.namespace, scope.baseUrl, lease.fence]);
}

/**
 * Thrown by a write whose lease another machine took over: a watch stops looking and stands by;
 * any other command (`hooks deliver`) ends with exit 10, what it recorded before kept.
 */
export class LeaseLostError extends LedgerLockedError {
  constructor() {
    super('the watch lease was taken over by another machine, which goes on from what this run recorded; nothing more was written', {
      hint: 'Only the holder of the lease writes the watch state and the outbox: let the other machine work.',
    });
  }
}

/**
 * Runs `work` in a transaction that first checks, under a share lock on the lease row, that the
 * lease is still ours: a takeover (which updates that row) waits for the write to commit, or the
 * write sees the new token and is refused, so no write of an old holder lands after a takeover.
 */
export async function fenced<T>(sql: TeamSql, scope: TeamScope, lease: HeldLease, work: (tx: TeamSql) => Promise<T>): Promise<T> {
  return sql.transaction(async (tx) => {
    const row = await tx.query<{ fence: string }>(`SELECT fence FROM ${LEASE_TABLE} WHERE namespace = $1 AND base_url = $2 FOR SHARE`, [scope.namespace, scope.baseUrl]);
    if (row[0] === undefined || Number(row[0].fence) !== lease.fence) throw new LeaseLostError();
    return work(tx);
  });
}

/**
 * Keeps a held lease: renews it every third of its length, and calls `lost` once when it cannot
 * (another took it over, or no renewal succeeded before the lease ran out by this machine's own
 * count from the last renewal's start, so a database out of reach is no reason to go on looking).
 */
export function keepLease(sql: TeamSql, scope: TeamScope, lease: HeldLease, leaseMs: number, clock: Clock, lost: () => void): { stop(): void } {
  const stopped = new AbortController();
  void (async () => {
    let validUntil = clock.now().getTime() + leaseMs;
    while (!stopped.signal.aborted) {
      try {
        await clock.sleep(renewEveryMs(leaseMs), stopped.signal);
      } catch {
        return;
      }
      const started = clock.now().getTime();
      let renewed: boolean | undefined;
      try {
        renewed = await renewLease(sql, scope, lease, leaseMs);
      } catch {
        renewed = undefined;
      }
      if (stopped.signal.aborted) return;
      if (renewed === true) validUntil = started + leaseMs;
      else if (renewed === false || clock.now().getTime() + renewEveryMs(leaseMs) >= validUntil) {
        lost();
        return;
      }
    }
  })();
  return { stop: () => stopped.abort() };
}
