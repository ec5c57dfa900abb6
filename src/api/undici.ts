import type { Agent, buildConnector, EnvHttpProxyAgent } from 'undici';
import type { Trust } from './trust';

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

/**
 * undici's connector for every connection taxprep makes: plain TCP for http://, TLS trusting
 * `trust` for https:// (its context made on the first https connection, so that a command that
 * makes none reads no store). undici's own connector module, which its clients load anyway.
 */
export async function loadConnector(trust: Trust, timeoutMs?: number): Promise<buildConnector.connector> {
  const { default: build } = await import('undici/lib/core/connect.js');
  const timeout = timeoutMs === undefined ? {} : { timeout: timeoutMs };
  const plain = build(timeout);
  let secure: buildConnector.connector | undefined;
  return (options, callback) => {
    if (options.protocol !== 'https:') return plain(options, callback);
    try {
      secure ??= build({ ...timeout, secureContext: trust.secureContext() });
    } catch (error) {
      callback(error as Error, null);
      return;
    }
    return secure(options, callback);
  };
}

/** The TLS options of a proxy agent (its tunnels' and an https:// proxy's own): a proxy agent takes objects, so the trust is read when it is made. */
export function proxyTls(trust: Trust): { requestTls: { secureContext: ReturnType<Trust['secureContext']> }; proxyTls: { secureContext: ReturnType<Trust['secureContext']> } } {
  const tls = { secureContext: trust.secureContext() };
  return { requestTls: tls, proxyTls: tls };
}
