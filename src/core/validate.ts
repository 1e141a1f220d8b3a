/**
 * Field readers for API bodies and the declarative file: each refuses with a 400 that names the
 * field and says, in a sentence, what was expected. Resources build their input parsers on these.
 */
import { invalidField } from '../http/errors.ts';

export type Fields = Readonly<Record<string, unknown>>;

/**
 * The body must be a JSON object holding only `allowed` fields (a typo is refused, not ignored).
 * Answers a copy without a prototype, so a field left out reads as undefined, never as something
 * every object inherits (`toString`, `constructor`).
 */
/** `at`: where the object stands in the body (`rule`, `endpointRules[2]`); absent for the body itself. */
export function objectBody(value: unknown, allowed: readonly string[], what: string, at?: string): Fields {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw invalidField(at ?? 'body', `Send ${what} as a JSON object.`);
  }
  const fields = Object.create(null) as Record<string, unknown>;
  for (const [key, v] of Object.entries(value)) {
    if (!allowed.includes(key)) {
      throw invalidField(at === undefined ? key : `${at}.${key}`, `"${key}" is not a field of ${what}; the fields are ${allowed.join(', ')}.`);
    }
    fields[key] = v;
  }
  return fields;
}

export function optionalString(body: Fields, field: string, opts: { max: number; pattern?: RegExp; hint?: string }): string | undefined {
  const v = body[field];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string' || v.trim() === '' || v.length > opts.max || (opts.pattern && !opts.pattern.test(v))) {
    throw invalidField(field, `${field} must be ${opts.hint ?? `a non-empty string of at most ${opts.max} characters`}.`);
  }
  return v;
}

export function requiredString(body: Fields, field: string, opts: { max: number; pattern?: RegExp; hint?: string }): string {
  const v = optionalString(body, field, opts);
  if (v === undefined) throw invalidField(field, `${field} is required: ${opts.hint ?? `a non-empty string of at most ${opts.max} characters`}.`);
  return v;
}

export function optionalBoolean(body: Fields, field: string, fallback: boolean): boolean {
  const v = body[field];
  if (v === undefined || v === null) return fallback;
  if (typeof v !== 'boolean') throw invalidField(field, `${field} must be true or false.`);
  return v;
}

/** A list of distinct strings, each checked by `item` (which returns a problem sentence or undefined). */
export function stringList(value: unknown, field: string, opts: { max: number; min?: number; item?: (s: string) => string | undefined }): string[] {
  if (!Array.isArray(value)) throw invalidField(field, `${field} must be a list of strings.`);
  if (value.length < (opts.min ?? 0)) throw invalidField(field, `${field} must hold at least ${opts.min} ${opts.min === 1 ? 'entry' : 'entries'}.`);
  if (value.length > opts.max) throw invalidField(field, `${field} may hold at most ${opts.max} entries.`);
  const seen = new Set<string>();
  value.forEach((s, i) => {
    if (typeof s !== 'string' || s === '') throw invalidField(`${field}[${i}]`, `${field}[${i}] must be a non-empty string.`);
    const problem = opts.item?.(s);
    if (problem) throw invalidField(`${field}[${i}]`, `${field}[${i}] ${problem}.`);
    if (seen.has(s)) throw invalidField(`${field}[${i}]`, `${field} lists "${s}" twice.`);
    seen.add(s);
  });
  return [...seen];
}

/** Names of roles, accounts, routes: letters, digits and . _ : - (no spaces, no slashes). */
export const NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,99}$/;
export const NAME_HINT = '1 to 100 letters, digits, ".", "_", ":" or "-", starting with a letter or digit';

export function nameProblem(s: string): string | undefined {
  return NAME_PATTERN.test(s) ? undefined : `must be ${NAME_HINT}`;
}

/** An id taken from the URL path. */
export function pathId(value: string, what: string): string {
  if (!NAME_PATTERN.test(value)) throw invalidField('id', `A ${what} id must be ${NAME_HINT}.`);
  return value;
}
