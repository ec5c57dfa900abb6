import type { Agent, EnvHttpProxyAgent } from 'undici';

/**
 * The parts of undici taxprep uses, not undici's index, which loads fetch, WebSocket, caches and
 * mocks too (and, through its cookies module, Node's own copy of undici): about as much start-up
 * time again as `node -e 0` (bench/startup.bench.js). Like the index, the request API is put on
 * every dispatcher (proxy agents call `connect`) before a class is handed out.
 */
let requestApi: Promise<void> | undefined;

function withRequestApi(): Promise<void> {
  return (requestApi ??= Promise.all([import('undici/lib/dispatcher/dispatcher.js'), import('undici/lib/api/index.js')]).then(([{ default: DispatcherClass }, { default: api }]) => {
    Object.assign(DispatcherClass.prototype, api);
  }));
}

/** The proxy-aware agent of the HTTP layer (src/api/http.ts). */
export async function loadEnvHttpProxyAgent(): Promise<typeof EnvHttpProxyAgent> {
  const [{ default: EnvHttpProxyAgentClass }] = await Promise.all([import('undici/lib/dispatcher/env-http-proxy-agent.js'), withRequestApi()]);
  return EnvHttpProxyAgentClass;
}

/** undici's plain agent (webhook deliveries). */
export async function loadAgent(): Promise<typeof Agent> {
  const [{ default: AgentClass }] = await Promise.all([import('undici/lib/dispatcher/agent.js'), withRequestApi()]);
  return AgentClass;
}
