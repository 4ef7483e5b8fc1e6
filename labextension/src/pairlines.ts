/**
 * The `NAME=VALUE`-a-line text fields of the launch form (Environment, Apps):
 * turning an object into lines and lines back into pairs. Used by ./envfield
 * and ./appsfield, which check the names and values their own way.
 */

/** One non-blank line: its number (from 1), and its text split at the first '='. */
export interface IPairLine {
  line: number;
  /** The text before '=', and after it; `name` is null when there is no '='. */
  name: string | null;
  value: string;
}

/** `{K: V}` (e.g. a profile's field) as `K=V` lines; '' for anything else. */
export function pairsText(value: unknown): string {
  if (!value || typeof value !== 'object' || Array.isArray(value)) {
    return '';
  }
  return Object.entries(value as Record<string, unknown>)
    .map(([k, v]) => `${k}=${v === null || v === undefined ? '' : String(v)}\n`)
    .join('');
}

/** The non-blank lines of `text`, each split at its first '='. */
export function pairLines(text: string): IPairLine[] {
  const found: IPairLine[] = [];
  text.split(/\r?\n/).forEach((line, i) => {
    if (!line.trim()) {
      return;
    }
    const at = line.indexOf('=');
    found.push({
      line: i + 1,
      name: at < 0 ? null : line.slice(0, at),
      value: at < 0 ? line : line.slice(at + 1)
    });
  });
  return found;
}
