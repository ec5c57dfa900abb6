import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { appDirectory } from '../../src/lib/paths';

describe('appDirectory: where env-paths puts them, XDG_* honoured everywhere', () => {
  const cases: Array<[kind: 'config' | 'data' | 'cache', env: Record<string, string>, platform: NodeJS.Platform, expected: string[]]> = [
    ['config', { HOME: '/home/u' }, 'linux', ['/home/u', '.config', 'taxprep']],
    ['data', { HOME: '/home/u' }, 'linux', ['/home/u', '.local', 'share', 'taxprep']],
    ['config', { HOME: '/Users/u' }, 'darwin', ['/Users/u', 'Library', 'Preferences', 'taxprep']],
    ['data', { HOME: '/Users/u' }, 'darwin', ['/Users/u', 'Library', 'Application Support', 'taxprep']],
    ['config', { USERPROFILE: 'C:/Users/u', APPDATA: 'C:/Roaming' }, 'win32', ['C:/Roaming', 'taxprep', 'Config']],
    ['data', { USERPROFILE: 'C:/Users/u', LOCALAPPDATA: 'C:/Local' }, 'win32', ['C:/Local', 'taxprep', 'Data']],
    ['config', { USERPROFILE: 'C:/Users/u', APPDATA: '' }, 'win32', ['C:/Users/u', 'AppData', 'Roaming', 'taxprep', 'Config']],
    ['data', { USERPROFILE: 'C:/Users/u' }, 'win32', ['C:/Users/u', 'AppData', 'Local', 'taxprep', 'Data']],
    ['config', { HOME: '/Users/u', XDG_CONFIG_HOME: '/x' }, 'darwin', ['/x', 'taxprep']],
    ['data', { HOME: '/home/u', XDG_DATA_HOME: '/d', XDG_CONFIG_HOME: '/x' }, 'linux', ['/d', 'taxprep']],
    ['config', { HOME: '/home/u', XDG_CONFIG_HOME: '' }, 'linux', ['/home/u', '.config', 'taxprep']],
    ['cache', { HOME: '/home/u' }, 'linux', ['/home/u', '.cache', 'taxprep']],
    ['cache', { HOME: '/Users/u' }, 'darwin', ['/Users/u', 'Library', 'Caches', 'taxprep']],
    ['cache', { USERPROFILE: 'C:/Users/u', LOCALAPPDATA: 'C:/Local' }, 'win32', ['C:/Local', 'taxprep', 'Cache']],
    ['cache', { HOME: '/Users/u', XDG_CACHE_HOME: '/c' }, 'darwin', ['/c', 'taxprep']],
  ];
  it.each(cases)('%s %j on %s', (kind, env, platform, expected) => {
    expect(appDirectory(kind, env, platform)).toBe(join(...expected));
  });
});
