/** The contract's version segment, which precedes every path (zod-free, for start-up paths). */
export const BASE_PATH = '/v1beta';
