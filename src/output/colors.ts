import picocolors from 'picocolors';
export type Palette = ReturnType<typeof picocolors.createColors>;

/**
 * Colours decided by the context (TTY, NO_COLOR, FORCE_COLOR, TERM=dumb, --no-color), never by
 * picocolors' own look at `process`, which knows nothing of --no-color or of a captured stream.
 */
export function palette(enabled: boolean): Palette {
  return picocolors.createColors(enabled);
}

type Tone = 'good' | 'busy' | 'attention' | 'bad' | 'quiet';

/** Every status and priority value the contract lists, by what it asks of the reader. */
const TONE_OF: Record<string, Tone> = {
  ok: 'good',
  active: 'good',
  completed: 'good',
  delivered: 'good',
  invited: 'good',
  in_progress: 'busy',
  in_review: 'busy',
  onboarding: 'busy',
  draft: 'busy',
  pending: 'busy',
  waiting_on_client: 'attention',
  medium: 'attention',
  suspended: 'bad',
  high: 'bad',
  low: 'quiet',
};

/** A status word in its colour; unknown values (a newer service) stay uncoloured. */
export function colorStatus(colors: Palette, status: string): string {
  switch (TONE_OF[status]) {
    case 'good':
      return colors.green(status);
    case 'busy':
      return colors.cyan(status);
    case 'attention':
      return colors.yellow(status);
    case 'bad':
      return colors.red(status);
    case 'quiet':
      return colors.dim(status);
    default:
      return status;
  }
}
