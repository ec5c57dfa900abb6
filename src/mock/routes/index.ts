import type { Handlers } from '../handler';
import { accountHandlers } from './accounts';
import { deliverableHandlers } from './deliverables';
import { documentHandlers } from './documents';
import { healthHandlers } from './health';
import { loginLinkHandlers } from './loginLinks';
import { projectHandlers } from './projects';

/** Every contract operation's handler, by its name in the endpoint table. */
export const handlers: Handlers = {
  ...healthHandlers,
  ...accountHandlers,
  ...loginLinkHandlers,
  ...documentHandlers,
  ...projectHandlers,
  ...deliverableHandlers,
};
