/**
 * A member written twice in one object of a JSON text. `JSON.parse` keeps the last silently,
 * where the YAML reader refuses the same file written as YAML: an operator who pasted a route's
 * `upstream` twice must hear which one is not applied, whichever format the file is in.
 *
 * Reads text `JSON.parse` has already accepted, so it only tells strings, keys and nesting apart.
 */

export interface RepeatedKey {
  /** The member's name as JSON reads it (escapes resolved). */
  readonly key: string;
  /** The place of its object: `routes.orders`, or '' at the top. */
  readonly path: string;
  /** 1-based line of the second occurrence. */
  readonly line: number;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const NEWLINE = 0x0a;

/** The first member written twice in one object, or null. */
export function repeatedKey(text: string): RepeatedKey | null {
  // One frame per open object or array: the keys seen (null for an array) and the key it sits under.
  const frames: Array<{ keys: Set<string> | null; under: string | null }> = [];
  let pendingKey: string | null = null;
  let line = 1;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === NEWLINE) line++;
    else if (c === QUOTE) {
      const start = i;
      for (i++; i < text.length && text.charCodeAt(i) !== QUOTE; i++) if (text.charCodeAt(i) === BACKSLASH) i++;
      let j = i + 1;
      while (j < text.length && /\s/.test(text[j]!)) j++;
      const top = frames.at(-1);
      if (text[j] === ':' && top?.keys) {
        const key = JSON.parse(text.slice(start, i + 1)) as string;
        if (top.keys.has(key)) return { key, path: pathOf(frames), line };
        top.keys.add(key);
        pendingKey = key;
      }
    } else if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      frames.push({ keys: c === 0x7b ? new Set() : null, under: pendingKey });
      pendingKey = null;
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      frames.pop();
    } else if (c === 0x2c /* , */) pendingKey = null;
  }
  return null;
}

function pathOf(frames: ReadonlyArray<{ under: string | null }>): string {
  return frames.map((f) => f.under).filter((k): k is string => k !== null).join('.');
}
