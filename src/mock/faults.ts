import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { FaultSettings } from './deps';
import { MockError } from './errors';

/** A number in [0, 1); injectable so tests can make a fault certain or impossible. */
export type RandomSource = () => number;

/** Lets the router skip fault handling (and its await) entirely in the usual case of no faults. */
export function hasFaults(faults: FaultSettings): boolean {
  return faults.latencyMs > 0 || faults.dropRate > 0 || faults.errorRate > 0;
}

/**
 * Applies the configured faults to one contract request (health included: an outage takes the
 * health check down too, which is what a script's health probe needs to notice). Latency first,
 * then a dropped connection, then a 503; settings are read live so `/_mock` controls take effect
 * at once. Returns false when the connection was dropped and nothing more may be sent.
 */
export async function applyFaults(
  faults: FaultSettings,
  random: RandomSource,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<boolean> {
  if (faults.latencyMs > 0) await sleep(faults.latencyMs);
  if (faults.dropRate > 0 && random() < faults.dropRate) {
    reply.hijack();
    request.raw.socket.destroy();
    return false;
  }
  if (faults.errorRate > 0 && random() < faults.errorRate) {
    throw new MockError('SERVICE_UNAVAILABLE', 'The service is temporarily unavailable (injected fault). Retry later.', undefined, {
      'retry-after': '1',
    });
  }
  return true;
}
