import { homedir } from 'node:os';
import { join } from 'node:path';

type Env = Record<string, string | undefined>;

type Kind = 'config' | 'data' | 'cache' | 'state';

/** Per kind: the XDG variable, then where env-paths puts it on macOS, on Windows and elsewhere (under the home directory). */
const PLACES: Record<Kind, { xdg: string; darwin: string[]; win32: [string, string, string]; other: string[] }> = {
  config: { xdg: 'XDG_CONFIG_HOME', darwin: ['Library', 'Preferences'], win32: ['APPDATA', 'Roaming', 'Config'], other: ['.config'] },
  data: { xdg: 'XDG_DATA_HOME', darwin: ['Library', 'Application Support'], win32: ['LOCALAPPDATA', 'Local', 'Data'], other: ['.local', 'share'] },
  cache: { xdg: 'XDG_CACHE_HOME', darwin: ['Library', 'Caches'], win32: ['LOCALAPPDATA', 'Local', 'Cache'], other: ['.cache'] },
  // What a run leaves for the next one (watch's last look): XDG's state directory; env-paths has none.
  state: { xdg: 'XDG_STATE_HOME', darwin: ['Library', 'Application Support'], win32: ['LOCALAPPDATA', 'Local', 'State'], other: ['.local', 'state'] },
};

/**
 * taxprep's own directory of a kind, where `env-paths` would put it, except that XDG_CONFIG_HOME,
 * XDG_DATA_HOME, XDG_CACHE_HOME and XDG_STATE_HOME are honoured on every platform (so tests, the demo and users on
 * macOS can point them elsewhere). Empty variables count as unset. Zod-free and client-free: the
 * mock and the launcher may use it.
 */
export function appDirectory(kind: Kind, env: Env, platform: NodeJS.Platform = process.platform): string {
  const home = env.HOME || env.USERPROFILE || homedir();
  const place = PLACES[kind];
  const xdg = env[place.xdg];
  if (xdg) return join(xdg, 'taxprep');
  if (platform === 'darwin') return join(home, ...place.darwin, 'taxprep');
  if (platform === 'win32') {
    const [variable, folder, leaf] = place.win32;
    return join(env[variable] || join(home, 'AppData', folder), 'taxprep', leaf);
  }
  return join(home, ...place.other, 'taxprep');
}
