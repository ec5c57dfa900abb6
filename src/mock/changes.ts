import { isProxy } from 'node:util/types';
import type { MockState } from './state';

/**
 * What changed in the mock's state since the last write, so that a write of a data directory
 * (`src/mock/journal.ts`) costs what the requests changed, not what the mock holds.
 *
 * Every part of the mock (routes, controls, the simulation, tests) changes the state as plain
 * objects and arrays: by pushing records, by assigning their fields, now and then by removing a
 * record or replacing a list. Rather than asking each of them to report its changes (one forgotten
 * report is a lost write), the state of a data directory is handed out behind proxies that see
 * every assignment: a list's proxy sees records appended, removed or replaced; a record's proxy
 * sees its fields assigned. Reads go straight to the objects (the proxies have no read trap).
 *
 * Changes are gathered in epochs: `take()` closes the open epoch and hands back what it changed,
 * for one journal record; `settle` forgets an epoch once it is on disk; `rollback()` puts back
 * every epoch not yet on disk, as they were before it (a write that failed, a full disk). Scalars
 * (id counters, the clock offset, the signing secret, the simulation cursor) are few bytes: they
 * are written whole with every record and kept whole for a rollback.
 */

/** The state's lists of records. A record, so that a list added to the state and not here fails to compile. */
const LISTS = {
  partners: true,
  apiKeys: true,
  accounts: true,
  users: true,
  loginLinks: true,
  documents: true,
  projects: true,
  outstandingItems: true,
  deliverables: true,
  outbox: true,
} satisfies { [K in keyof MockState as MockState[K] extends unknown[] ? K : never]-?: true };
export type ListName = keyof typeof LISTS;
export const LIST_NAMES = Object.keys(LISTS) as ListName[];

export type Scalars = Pick<MockState, 'nextIds' | 'clockOffsetMs' | 'signingSecret' | 'simulation'>;
export type StateRecord = Record<string, unknown>;

export function scalarsOf(state: MockState): Scalars {
  const { nextIds, clockOffsetMs, signingSecret, simulation } = state;
  return { nextIds, clockOffsetMs, signingSecret, ...(simulation === undefined ? {} : { simulation }) };
}

/** How a record of a list is found again when the journal says it changed: its id (an API key has none: its digest). */
export const KEY_FIELD: Record<ListName, string> = Object.fromEntries(LIST_NAMES.map((name) => [name, name === 'apiKeys' ? 'key_sha256' : 'id'])) as Record<ListName, string>;

/** A list's changes in one journal record: appended and changed records, or the whole list when it lost or reordered records. */
export type ListChange = { appended: StateRecord[]; changed: StateRecord[] } | { whole: StateRecord[] };
export interface Changes {
  scalars: Scalars;
  lists: Partial<Record<ListName, ListChange>>;
}

interface ListUndo {
  /** The list (the array behind its proxy) and its length as the epoch found it. */
  array: StateRecord[];
  length: number;
  /** A copy taken before its first change other than an append (the records up to `length` are the epoch's start). */
  copy?: StateRecord[];
}

/** What one epoch changed, and what it takes to put it back. */
interface Epoch {
  /** The scalars as the epoch found them, as JSON: to tell whether they changed, and to put them back. */
  scalarsText: string;
  lists: Map<StateRecord[], ListUndo>;
  /** The state's list before the epoch replaced it (`state.outbox = []`). */
  replaced: Map<ListName, StateRecord[]>;
  /** Each record changed in place, with its fields as the epoch found them. */
  records: Map<StateRecord, { name: ListName; fields: StateRecord }>;
}

export interface TrackedState {
  /** The state behind its proxies: hand this one out. */
  readonly state: MockState;
  /** True when something changed since the last `take()`. */
  changed(): boolean;
  /** Closes the open epoch: its changes, for the journal, and the handle to settle it with once written. */
  take(): { changes: Changes; epoch: object };
  /** The epoch is on disk: it will not be rolled back. */
  settle(epoch: object): void;
  /** Puts back every change not yet settled, newest first. */
  rollback(): void;
}

/** Traps that tell `note` of a change to their target before it is made. */
function noting<T extends object>(note: (target: T) => void): ProxyHandler<T> {
  return {
    set(target, key, value) {
      note(target);
      return Reflect.set(target, key, value);
    },
    deleteProperty(target, key) {
      note(target);
      return Reflect.deleteProperty(target, key);
    },
    defineProperty(target, key, descriptor) {
      note(target);
      return Reflect.defineProperty(target, key, descriptor);
    },
  };
}

const isObject = (value: unknown): value is StateRecord => typeof value === 'object' && value !== null;

/**
 * Puts `raw` behind proxies (its lists and records are the ones kept: no copy is made) and tracks
 * its changes from now on.
 */
export function trackState(raw: MockState): TrackedState {
  const root = raw as unknown as Record<string, unknown>;
  const newEpoch = (): Epoch => ({ scalarsText: JSON.stringify(scalarsOf(raw)), lists: new Map(), replaced: new Map(), records: new Map() });
  let open = newEpoch();
  // Taken and not yet settled, oldest first: at most one while the commit queue writes one at a time.
  const unsettled: Epoch[] = [];

  const listUndo = (array: StateRecord[]): ListUndo => {
    let undo = open.lists.get(array);
    if (!undo) {
      undo = { array, length: array.length };
      open.lists.set(array, undo);
    }
    return undo;
  };
  // The array behind each list's proxy: ten lists, or a few more after lists were replaced.
  const listTargets = new WeakMap<object, StateRecord[]>();

  const recordHandlers = new Map<ListName, ProxyHandler<StateRecord>>();
  const recordHandler = (name: ListName): ProxyHandler<StateRecord> => {
    let handler = recordHandlers.get(name);
    if (!handler) {
      handler = noting((target) => {
        if (!open.records.has(target)) open.records.set(target, { name, fields: { ...target } });
      });
      recordHandlers.set(name, handler);
    }
    return handler;
  };
  // Every proxy in the state is one of these (nothing else makes proxies of records).
  const tracked = (name: ListName, value: unknown): unknown => (isObject(value) && !isProxy(value) ? new Proxy(value, recordHandler(name)) : value);

  const trackList = (name: ListName, array: StateRecord[]): StateRecord[] => {
    for (let index = 0; index < array.length; index += 1) array[index] = tracked(name, array[index]) as StateRecord;
    const rewritten = (target: StateRecord[]) => {
      const undo = listUndo(target);
      undo.copy ??= target.slice();
    };
    const proxy = new Proxy(array, {
      ...noting(rewritten),
      set(target, key, value) {
        const index = typeof key === 'string' ? Number(key) : NaN;
        if (Number.isInteger(index) && index >= 0) {
          if (index >= target.length) listUndo(target);
          else rewritten(target);
          target[index] = tracked(name, value) as StateRecord;
          return true;
        }
        if (key === 'length' && typeof value === 'number' && value < target.length) rewritten(target);
        return Reflect.set(target, key, value);
      },
    });
    listTargets.set(proxy, array);
    return proxy;
  };

  for (const name of LIST_NAMES) root[name] = trackList(name, root[name] as StateRecord[]);
  const state = new Proxy(root, {
    set(target, key, value) {
      const name = key as ListName;
      if (Object.hasOwn(LISTS, name) && target[name] !== value) {
        if (!open.replaced.has(name)) open.replaced.set(name, target[name] as StateRecord[]);
        return Reflect.set(target, key, Array.isArray(value) && !isProxy(value) ? trackList(name, value as StateRecord[]) : value);
      }
      return Reflect.set(target, key, value);
    },
  }) as unknown as MockState;

  /** The array behind the state's list `name` (a list assigned without the state's proxy is taken as it is). */
  const listOf = (name: ListName): StateRecord[] => {
    const list = root[name] as StateRecord[];
    return listTargets.get(list) ?? list;
  };

  // A record both appended and changed in the epoch is written twice: the change is replayed after
  // the append and finds the record, so that costs a few bytes and no lookup here.
  const listsOf = (epoch: Epoch): Partial<Record<ListName, ListChange>> => {
    const lists: Partial<Record<ListName, ListChange>> = {};
    for (const name of LIST_NAMES) {
      const current = listOf(name);
      const undo = epoch.lists.get(current);
      if (epoch.replaced.has(name) || undo?.copy) lists[name] = { whole: current };
      else if (undo && current.length > undo.length) lists[name] = { appended: current.slice(undo.length), changed: [] };
    }
    for (const [record, { name }] of epoch.records) {
      const change = (lists[name] ??= { appended: [], changed: [] });
      if ('changed' in change) change.changed.push(record);
    }
    return lists;
  };

  const undo = (epoch: Epoch) => {
    for (const [record, { fields }] of epoch.records) {
      for (const key of Object.keys(record)) if (!Object.hasOwn(fields, key)) delete record[key];
      Object.assign(record, fields);
    }
    for (const { array, length, copy } of epoch.lists.values()) {
      array.length = length;
      if (copy) for (let index = 0; index < length; index += 1) array[index] = copy[index]!;
    }
    for (const [name, list] of epoch.replaced) root[name] = list;
    const { nextIds, clockOffsetMs, signingSecret, simulation } = JSON.parse(epoch.scalarsText) as Scalars;
    Object.assign(root, { nextIds, clockOffsetMs, signingSecret });
    if (simulation === undefined) delete root.simulation;
    else root.simulation = simulation;
  };

  return {
    state,
    changed: () => open.lists.size > 0 || open.replaced.size > 0 || open.records.size > 0 || JSON.stringify(scalarsOf(raw)) !== open.scalarsText,
    take() {
      const epoch = open;
      const changes: Changes = { scalars: scalarsOf(raw), lists: listsOf(epoch) };
      unsettled.push(epoch);
      open = newEpoch();
      return { changes, epoch };
    },
    settle(epoch) {
      const index = unsettled.indexOf(epoch as Epoch);
      if (index >= 0) unsettled.splice(0, index + 1);
    },
    rollback() {
      for (const epoch of [open, ...unsettled.reverse()]) undo(epoch);
      unsettled.length = 0;
      open = newEpoch();
    },
  };
}
