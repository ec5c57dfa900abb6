import { homedir } from 'node:os';
import { join } from 'node:path';

type Env = Record<string, string | undefined>;

/**
 * taxprep's own directory of a kind, where `env-paths` would put it, except that XDG_CONFIG_HOME
 * and XDG_DATA_HOME are honoured on every platform (so tests, the demo and users on macOS can point
 * them elsewhere). Empty variables count as unset. Zod-free and client-free: the mock may use it.
 */
export function appDirectory(kind: 'config' | 'data', env: Env, platform: NodeJS.Platform = process.platform): string {
  const home = env.HOME || env.USERPROFILE || homedir();
  const xdg = kind === 'config' ? env.XDG_CONFIG_HOME : env.XDG_DATA_HOME;
  if (xdg) return join(xdg, 'taxprep');
  if (platform === 'darwin') return join(home, 'Library', kind === 'config' ? 'Preferences' : 'Application Support', 'taxprep');
  if (platform === 'win32') {
    return kind === 'config'
      ? join(env.APPDATA || join(home, 'AppData', 'Roaming'), 'taxprep', 'Config')
      : join(env.LOCALAPPDATA || join(home, 'AppData', 'Local'), 'taxprep', 'Data');
  }
  return kind === 'config' ? join(home, '.config', 'taxprep') : join(home, '.local', 'share', 'taxprep');
}
