/**
 * The simulation's dice: a number in [0, 1) that depends only on the seed and the parts given
 * (project id, step, what is being decided), never on how often or in which order it is asked.
 * So a run is the same whether the clock moves a day at once or an hour at a time.
 */
export function draw(seed: number, ...parts: number[]): number {
  let hash = mix(seed ^ 0x9e3779b9);
  for (const part of parts) {
    // Ids may exceed 32 bits: both halves count.
    hash = mix(hash ^ mix(part >>> 0) ^ Math.imul(Math.floor(part / 2 ** 32) >>> 0, 0x85ebca6b));
  }
  return hash / 2 ** 32;
}

/** A 32-bit integer finaliser (lowbias32): every input bit moves about half the output bits. */
function mix(value: number): number {
  let hash = value >>> 0;
  hash ^= hash >>> 16;
  hash = Math.imul(hash, 0x7feb352d);
  hash ^= hash >>> 15;
  hash = Math.imul(hash, 0x846ca68b);
  hash ^= hash >>> 16;
  return hash >>> 0;
}
