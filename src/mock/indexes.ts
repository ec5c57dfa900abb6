import type { AccountRecord, DeliverableRecord, DocumentRecord, LoginLinkRecordStored, MockState, OutstandingItemRecord, ProjectRecord, UserRecord } from './state';

/**
 * Indexes over the state's record lists, for every lookup a route makes by id or by owner: a
 * route's cost then depends on the records it answers with, not on how many the mock holds.
 *
 * They are derived from the lists, not kept beside them: every part of the mock (routes, controls,
 * the simulation, tests) keeps changing the state as plain arrays, and an index catches up when it
 * is next read. That is cheap and exact because of two facts of the state: the fields indexed by
 * (ids, owners, emails, token digests) never change once a record is made, and lists change only
 * by appending, by removing, or by being replaced whole (a reset, an emptied outbox). Appended
 * records are indexed one by one; a removal is seen (the record last indexed is no longer where it
 * was, or the list is shorter) and the index is rebuilt, which happens only for the few removals
 * the mock makes (outstanding items).
 */
abstract class ListIndex<T> {
  private list: readonly T[] | undefined;
  private indexed = 0;
  private lastIndexed: T | undefined;

  protected abstract clear(): void;
  protected abstract add(record: T): void;

  protected catchUp(list: readonly T[]): void {
    const unchangedSoFar = list === this.list && list.length >= this.indexed && (this.indexed === 0 || list[this.indexed - 1] === this.lastIndexed);
    if (!unchangedSoFar) {
      this.list = list;
      this.indexed = 0;
      this.clear();
    }
    for (; this.indexed < list.length; this.indexed += 1) this.add(list[this.indexed]!);
    this.lastIndexed = list[list.length - 1];
  }
}

/** Records by a key many share (an owner). */
class GroupIndex<T, K> extends ListIndex<T> {
  private groups = new Map<K, T[]>();

  /** `order`, when given, keeps each group sorted by it (by fields that never change) instead of in list order. */
  constructor(
    private readonly keyOf: (record: T) => K,
    private readonly order?: (a: T, b: T) => number,
  ) {
    super();
  }

  /** The records of `list` under `key`, in list order (or in `order`). */
  get(list: readonly T[], key: K): readonly T[] {
    this.catchUp(list);
    return this.groups.get(key) ?? [];
  }

  protected clear(): void {
    this.groups = new Map();
  }

  protected add(record: T): void {
    const key = this.keyOf(record);
    const group = this.groups.get(key);
    if (!group) this.groups.set(key, [record]);
    else if (!this.order || this.order(group[group.length - 1]!, record) <= 0) group.push(record);
    else group.splice(sortedPosition(group, record, this.order), 0, record);
  }
}

/** The first record with a key of its own (an id, a token digest): no group per record, which a million documents would pay for. */
class UniqueIndex<T, K> extends ListIndex<T> {
  private records = new Map<K, T>();

  constructor(private readonly keyOf: (record: T) => K) {
    super();
  }

  get(list: readonly T[], key: K): T | undefined {
    this.catchUp(list);
    return this.records.get(key);
  }

  protected clear(): void {
    this.records = new Map();
  }

  protected add(record: T): void {
    const key = this.keyOf(record);
    if (!this.records.has(key)) this.records.set(key, record);
  }
}

/** Where `record` goes in `group`, sorted by `order`: after every record that does not come after it. */
function sortedPosition<T>(group: readonly T[], record: T, order: (a: T, b: T) => number): number {
  let low = 0;
  let high = group.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (order(group[middle]!, record) <= 0) low = middle + 1;
    else high = middle;
  }
  return low;
}

/** Lists are newest first: by the given timestamp, then by id (higher first), so that records made within the same millisecond keep one order. */
export function newestFirst<T extends { id: number }>(timestampOf: (record: T) => string) {
  return (a: T, b: T): number => timestampOf(b).localeCompare(timestampOf(a)) || b.id - a.id;
}

/** Emails are compared without regard to case, everywhere in the service. */
const emailKey = (email: string) => email.toLowerCase();

function indexesFor(state: MockState) {
  const accountsById = new UniqueIndex((account: AccountRecord) => account.id);
  const accountsByEmail = new GroupIndex((account: AccountRecord) => emailKey(account.email));
  const usersByAccount = new GroupIndex((user: UserRecord) => user.account_id);
  const usersById = new UniqueIndex((user: UserRecord) => user.id);
  const usersByEmail = new GroupIndex((user: UserRecord) => emailKey(user.email));
  const documentsById = new UniqueIndex((document: DocumentRecord) => document.id);
  const documentsByAccount = new GroupIndex((document: DocumentRecord) => document.account_id);
  const projectsById = new UniqueIndex((project: ProjectRecord) => project.id);
  const projectsByAccount = new GroupIndex((project: ProjectRecord) => project.account_id);
  const deliverablesById = new UniqueIndex((deliverable: DeliverableRecord) => deliverable.id);
  const deliverablesByProject = new GroupIndex((deliverable: DeliverableRecord) => deliverable.project_id);
  // A deliverable's project, the project's account and the account's partner never change, nor does its prepared_date.
  const partnerOfDeliverable = (deliverable: DeliverableRecord) => {
    const project = projectsById.get(state.projects, deliverable.project_id);
    return project && accountsById.get(state.accounts, project.account_id)?.partner_id;
  };
  const newestDeliverableFirst = newestFirst((deliverable: DeliverableRecord) => deliverable.prepared_date);
  const deliverablesByPartner = new GroupIndex(partnerOfDeliverable, newestDeliverableFirst);
  const deliverablesByPartnerAndType = new GroupIndex((deliverable: DeliverableRecord) => {
    const partner = partnerOfDeliverable(deliverable);
    return partner === undefined ? undefined : `${partner} ${projectsById.get(state.projects, deliverable.project_id)!.type}`;
  }, newestDeliverableFirst);
  const loginLinksByToken = new UniqueIndex((link: LoginLinkRecordStored) => link.token_sha256);
  const loginLinksByUser = new GroupIndex((link: LoginLinkRecordStored) => link.user_id);
  const itemsByProject = new GroupIndex((item: OutstandingItemRecord) => item.project_id);
  return {
    account: (id: number): AccountRecord | undefined => accountsById.get(state.accounts, id),
    accountsWithEmail: (email: string) => accountsByEmail.get(state.accounts, emailKey(email)),
    usersOfAccount: (accountId: number) => usersByAccount.get(state.users, accountId),
    user: (id: number): UserRecord | undefined => usersById.get(state.users, id),
    usersWithEmail: (email: string) => usersByEmail.get(state.users, emailKey(email)),
    document: (id: number): DocumentRecord | undefined => documentsById.get(state.documents, id),
    documentsOfAccount: (accountId: number) => documentsByAccount.get(state.documents, accountId),
    project: (id: number): ProjectRecord | undefined => projectsById.get(state.projects, id),
    projectsOfAccount: (accountId: number) => projectsByAccount.get(state.projects, accountId),
    deliverable: (id: number): DeliverableRecord | undefined => deliverablesById.get(state.deliverables, id),
    /** Each project has at most one deliverable. */
    deliverableOfProject: (projectId: number): DeliverableRecord | undefined => deliverablesByProject.get(state.deliverables, projectId)[0],
    /** A partner's deliverables, newest first (by prepared_date, then id); of one project type when `projectType` is given. */
    deliverablesOfPartner: (partnerId: number, projectType?: ProjectRecord['type']): readonly DeliverableRecord[] =>
      projectType === undefined ? deliverablesByPartner.get(state.deliverables, partnerId) : deliverablesByPartnerAndType.get(state.deliverables, `${partnerId} ${projectType}`),
    loginLinkWithToken: (digest: string): LoginLinkRecordStored | undefined => loginLinksByToken.get(state.loginLinks, digest),
    loginLinksOfUser: (userId: number) => loginLinksByUser.get(state.loginLinks, userId),
    outstandingItemsOfProject: (projectId: number) => itemsByProject.get(state.outstandingItems, projectId),
  };
}

export type StateIndexes = ReturnType<typeof indexesFor>;

// One set per state object: a reset makes a new state, and with it new indexes.
const byState = new WeakMap<MockState, StateIndexes>();

/** The indexes of `state`, made at the first lookup. */
export function indexesOf(state: MockState): StateIndexes {
  let indexes = byState.get(state);
  if (!indexes) {
    indexes = indexesFor(state);
    byState.set(state, indexes);
  }
  return indexes;
}
