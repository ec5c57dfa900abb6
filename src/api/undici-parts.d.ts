// Types for the undici modules that src/api/undici.ts imports directly instead of undici's index
// (see the comment there); their values are what the index re-exports under these names.
declare module 'undici/lib/dispatcher/env-http-proxy-agent.js' {
  import type { EnvHttpProxyAgent } from 'undici';
  const EnvHttpProxyAgentClass: typeof EnvHttpProxyAgent;
  export default EnvHttpProxyAgentClass;
}

declare module 'undici/lib/dispatcher/agent.js' {
  import type { Agent } from 'undici';
  const AgentClass: typeof Agent;
  export default AgentClass;
}

declare module 'undici/lib/dispatcher/dispatcher.js' {
  import type { Dispatcher } from 'undici';
  const DispatcherClass: typeof Dispatcher;
  export default DispatcherClass;
}

declare module 'undici/lib/api/index.js' {
  /** `request`, `stream`, `pipeline`, `upgrade` and `connect`, which undici's index puts on `Dispatcher.prototype`. */
  const requestApi: Record<string, unknown>;
  export default requestApi;
}

declare module 'undici/lib/core/connect.js' {
  import type { buildConnector } from 'undici';
  const build: typeof buildConnector;
  export default build;
}
