/**
 * What a parsed JSON body may hold, whatever the endpoint: no deeper than MAX_DEPTH (a document
 * nested thousands deep parses, then overflows the stack of whatever walks it next: the copy to
 * an actor, the answer that echoes it), and no NUL character or lone surrogate in a key or a
 * string (neither SQLite nor PostgreSQL stores them in text as given). Checked once where bodies
 * are read, so no field can forget.
 */
import { repeatedKey } from './json-keys.ts';

export const MAX_DEPTH = 64;

export interface BodyProblem {
  /** The field, as the problem's `field` names it (`openapi.paths./a`, `items[3]`). */
  readonly field: string;
  readonly detail: string;
}

export function jsonBodyProblem(value: unknown): BodyProblem | undefined {
  return walk(value, '', 0);
}

/** A member written twice in one object of the body's text (`JSON.parse` keeps the last silently). */
export function repeatedKeyProblem(text: string): BodyProblem | undefined {
  const repeated = repeatedKey(text);
  if (repeated === null) return undefined;
  const field = named(repeated.path === '' ? repeated.key : `${repeated.path}.${repeated.key}`);
  return { field, detail: `${field} is written twice in one object; write it once.` };
}

/** The field's path as a refusal names it: cut, since a caller chose its keys. */
function named(at: string): string {
  if (at === '') return 'body';
  return at.length > 200 ? `${at.slice(0, 199)}…` : at;
}

/**
 * Half of a UTF-16 pair without its other half (`"\ud800"` is valid JSON): the databases store
 * text as UTF-8, where it would become U+FFFD, and what was stored would no longer be what was sent.
 */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

function textProblem(s: string, at: string, what: string): BodyProblem | undefined {
  if (s.includes('\u0000')) return { field: named(at), detail: `${what} holds a NUL character (U+0000), which the gateway does not store.` };
  if (LONE_SURROGATE.test(s)) return { field: named(at), detail: `${what} holds half of a UTF-16 surrogate pair (an escape such as \\ud800 without its partner), which is not text the gateway can store.` };
  return undefined;
}

function walk(value: unknown, at: string, depth: number): BodyProblem | undefined {
  if (typeof value === 'string') return textProblem(value, at, at === '' ? 'The body' : named(at));
  if (value === null || typeof value !== 'object') return undefined;
  if (depth >= MAX_DEPTH) return { field: named(at), detail: `${at === '' ? 'The body' : named(at)} nests objects and arrays deeper than ${MAX_DEPTH} levels.` };
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const problem = walk(value[i], `${at}[${i}]`, depth + 1);
      if (problem) return problem;
    }
    return undefined;
  }
  for (const key of Object.keys(value)) {
    const field = at === '' ? key : `${at}.${key}`;
    const keyProblem = textProblem(key, at, `A field name under ${at === '' ? 'the body' : named(at)}`);
    if (keyProblem) return keyProblem;
    const problem = walk((value as Record<string, unknown>)[key], field, depth + 1);
    if (problem) return problem;
  }
  return undefined;
}
