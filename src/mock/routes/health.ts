import type { Handlers } from '../handler';

export const healthHandlers: Pick<Handlers, 'health'> = {
  health: (_input, deps) => ({ status: 'ok', timestamp: deps.clock.nowIso() }),
};
