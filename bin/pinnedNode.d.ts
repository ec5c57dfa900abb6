// Types of bin/pinnedNode.js for its test (test/cli/pinnedNode.test.ts).
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
/** The pinned binary's path, fetched through npm when missing. */
export function pinnedNodePath(pin?: Required<NodePin>): string;
