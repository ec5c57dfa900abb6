type Env = Record<string, string | undefined>;

const DEFAULT_PORTS: Record<string, number> = { 'http:': 80, 'https:': 443 };

export interface ProxyInEffect {
  /** The proxy's address with any user name and password hidden; undefined: a direct connection. */
  proxy?: string;
  /** The variable it came from, or the NO_PROXY entry that sends the host direct. */
  because: string;
}

/**
 * Which proxy a request to `baseUrl` goes through, decided as undici's EnvHttpProxyAgent decides
 * it with the values src/api/http.ts gives it (lower-case names win; an https address falls back
 * to the http proxy; NO_PROXY entries match the host or a domain suffix, optionally a port).
 */
export function proxyInEffect(baseUrl: string, env: Env): ProxyInEffect {
  const url = new URL(baseUrl);
  const fromEnv = (lower: string, upper: string): [string, string] | undefined => {
    if (env[lower]) return [env[lower]!, lower];
    if (env[lower] === undefined && env[upper]) return [env[upper]!, upper];
    return undefined;
  };
  const httpProxy = fromEnv('http_proxy', 'HTTP_PROXY');
  const chosen = url.protocol === 'https:' ? (fromEnv('https_proxy', 'HTTPS_PROXY') ?? httpProxy) : httpProxy;
  if (chosen === undefined) return { because: url.protocol === 'https:' ? 'neither HTTPS_PROXY nor HTTP_PROXY is set' : 'HTTP_PROXY is not set' };
  const [noProxyValue, noProxyName] = fromEnv('no_proxy', 'NO_PROXY') ?? ['', 'NO_PROXY'];
  const host = url.hostname.toLowerCase();
  const port = Number.parseInt(url.port, 10) || DEFAULT_PORTS[url.protocol] || 0;
  if (noProxyValue === '*') return { because: `${noProxyName}=*` };
  for (const entry of noProxyValue.split(/[,\s]/).filter(Boolean)) {
    const parsed = /^(.+):(\d+)$/.exec(entry);
    const name = (parsed ? parsed[1]! : entry).replace(/^\*?\./, '').toLowerCase();
    if (parsed && Number(parsed[2]) !== port) continue;
    if (host === name || host.endsWith(`.${name}`)) return { because: `${noProxyName} lists ${entry}` };
  }
  return { proxy: withoutCredentials(chosen[0]), because: chosen[1] };
}

function withoutCredentials(proxy: string): string {
  try {
    const url = new URL(proxy);
    return `${url.protocol}//${url.username || url.password ? '…@' : ''}${url.host}`;
  } catch {
    return '(not a URL)';
  }
}

/** Loopback hosts, the only ones plain http may carry a key to. */
export function isLoopback(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  return host === 'localhost' || host.endsWith('.localhost') || host === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}
