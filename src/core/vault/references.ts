/**
 * Vault references in a scheduled call's header values (spec 1.1 rule 27): `${name}` or `$name`,
 * resolved at call time. An unknown name goes out verbatim (`$typo`), never as an empty header.
 *
 * What a reference becomes is bounded twice. Where a schedule is written, a value names at most
 * MAX_REFERENCES values; where the call is made, the headers resolved together stay within
 * MAX_RESOLVED characters: a 64 KiB secret named thousands of times would otherwise be built into
 * a header block of gigabytes, and the string's end would be the process's.
 */
import { MAX_VAULT_VALUE } from './vault-input.ts';

const REFERENCE = /\$\{([A-Za-z_][A-Za-z0-9_]{0,127})\}|\$([A-Za-z_][A-Za-z0-9_]{0,127})/g;

/** References one header value may hold (checked where a schedule is written). */
export const MAX_REFERENCES = 16;
/** Characters a call's headers may hold once resolved: two of the largest vault values. */
export const MAX_RESOLVED = 2 * MAX_VAULT_VALUE;

/** Names referenced by a value, for loading only what is needed. */
export function referencedNames(value: string): string[] {
  return [...value.matchAll(REFERENCE)].map((m) => (m[1] ?? m[2])!);
}

/**
 * `value` with its references replaced, or null as soon as the result would pass `limit`
 * characters: nothing longer than the limit is ever built.
 */
export function resolveReferences(value: string, lookup: (name: string) => string | undefined, limit = Number.POSITIVE_INFINITY): string | null {
  const re = new RegExp(REFERENCE.source, 'g');
  const parts: string[] = [];
  let length = 0;
  let from = 0;
  for (let m = re.exec(value); m !== null; m = re.exec(value)) {
    const literal = value.slice(from, m.index);
    const replaced = lookup((m[1] ?? m[2])!) ?? m[0];
    length += literal.length + replaced.length;
    if (length > limit) return null;
    parts.push(literal, replaced);
    from = m.index + m[0].length;
  }
  const tail = value.slice(from);
  if (length + tail.length > limit) return null;
  parts.push(tail);
  return parts.join('');
}
