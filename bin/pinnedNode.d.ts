// Types of bin/pinnedNode.js for its tests (test/cli/pinnedNode.test.ts, release-without-node.test.ts).
export interface NodePin {
  version: string;
  line?: string;
  integrity?: string;
  /** The line's end of life, YYYY-MM-DD. */
  endOfLife: string;
}
export const PINNED_NODE: Required<NodePin>;
/** Throws from the day the pin's line reaches end of life. */
export function assertSupported(pin: NodePin, today?: Date): void;
/** The environment variable naming the directory the pinned Node is cached in, instead of node_modules/.cache/taxprep-node/. */
export const CACHE_VARIABLE: string;
/** The pinned Node could not be fetched, or was not the pinned file. */
export class PinnedNodeUnavailable extends Error {
  /** What to do about it. */
  remedy: string;
  constructor(message: string, remedy: string);
}
/** The pinned binary's path, fetched through npm when missing. */
export function pinnedNodePath(pin?: Required<NodePin>, env?: NodeJS.ProcessEnv): string;
