import type { RequestLog, RequestLogEntry } from './deps';

/** The newest requests kept for `/_mock/requests`; older ones are dropped so a long run stays small. */
const REQUEST_LOG_CAPACITY = 1000;

export function createRequestLog(capacity = REQUEST_LOG_CAPACITY): RequestLog {
  let entries: RequestLogEntry[] = [];
  return {
    record(entry) {
      entries.push(entry);
      // Trimmed in batches so that recording stays cheap under load.
      if (entries.length >= capacity * 2) entries = entries.slice(-capacity);
    },
    entries: () => entries.slice(-capacity),
    clear() {
      entries = [];
    },
  };
}
