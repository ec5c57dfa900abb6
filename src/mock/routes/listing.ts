import { PAGE_SIZE } from '../../contract';

/** One page of a filtered list, with the contract's `total_count` and `has_more`. */
export function paginate<T>(
  matching: readonly T[],
  query: { limit?: number | undefined; offset?: number | undefined },
): { page: T[]; total_count: number; has_more: boolean } {
  const limit = query.limit ?? PAGE_SIZE.default;
  const offset = query.offset ?? 0;
  const page = matching.slice(offset, offset + limit);
  return { page, total_count: matching.length, has_more: offset + page.length < matching.length };
}

