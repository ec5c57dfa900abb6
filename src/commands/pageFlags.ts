import { OFFSET_MAX, PAGE_SIZE } from '../contract/vocabulary';
import type { FlagSpec } from './spec';

/** `--limit`, `--offset`, `--all` and `--ndjson` of a paged list of `noun`. */
export function pageFlags(noun: string): FlagSpec[] {
  return [
    { flag: '--limit <n>', field: 'limit', help: 'page size', range: PAGE_SIZE, default: `${PAGE_SIZE.default}; with --all, the size of each page fetched` },
    { flag: '--offset <n>', field: 'offset', help: `number of ${noun} to skip`, range: { min: 0, max: OFFSET_MAX } },
    { flag: '--all', help: 'follow pages to the end' },
    { flag: '--max-pages <n>', help: 'with --all, fail (exit 12) rather than fetch more than this many pages', default: '1000' },
    { flag: '--ndjson', help: 'one JSON document per line, printed as pages arrive' },
  ];
}
