// The ideal a paced batch is measured against, shared by the batch benches (login links, account
// import, document sync): an ideal client sends every request the moment the limit admits it.

/**
 * The shortest span from the first admitted request to the last that `limit` requests per
 * `windowMs` allow for `count` requests, under a sliding log (the mock's limiter): each further
 * `limit` waits one window after the first of the previous `limit`.
 */
export function idealSpanMs(count, limit, windowMs) {
  return (Math.ceil(count / limit) - 1) * windowMs;
}

/** A `/_mock` control call (JSON in and out); throws on a non-2xx answer. */
export async function control(appUrl, method, path, body) {
  const response = await fetch(`${appUrl}/_mock${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`${method} /_mock${path}: ${response.status} ${await response.text()}`);
  return response.json();
}

/**
 * What the mock's request log says of a paced run: admissions (status `admittedStatus`) from the
 * first to the last, against the ideal span for their count, and how many were answered 429.
 * The log keeps the newest 1000 requests: a paced run must stay below that.
 */
export async function pacingFromLog(appUrl, { limit, windowMs, admittedStatus = 201 }) {
  const { requests } = await control(appUrl, 'GET', '/requests');
  const admitted = requests.filter((request) => request.status === admittedStatus).map((request) => Date.parse(request.at));
  const refused = requests.filter((request) => request.status === 429).length;
  const spanMs = admitted.at(-1) - admitted[0];
  const idealMs = idealSpanMs(admitted.length, limit, windowMs);
  return { admitted: admitted.length, refused, seconds: spanMs / 1000, idealSeconds: idealMs / 1000, ratio: spanMs / idealMs };
}
