/**
 * List filters (spec 1.1 rule 30): `meta.<key>=<value>` exact, `meta.<key>=~<expression>` by
 * regular expression, `tenant` (the schedule's organisation), `route`. All must hold. An
 * expression that does not compile is refused, never answered with an empty list.
 *
 * Backtracking engines can take exponential time on nested quantifiers (`(a+)+$`): such shapes
 * are refused before they run. Polynomial ones (`a*a*a*a*!`) pass any such check; the process
 * runs an expression that backtracks too long on V8's linear-time engine instead
 * (workers/regexp-fallback.ts), so no expression holds the ScheduleActor's thread.
 */
import { GatewayError } from '../../http/errors.ts';

export type Filter =
  | { readonly kind: 'meta'; readonly key: string; readonly equals: string }
  | { readonly kind: 'meta-regex'; readonly key: string; readonly source: string }
  | { readonly kind: 'tenant'; readonly equals: string }
  | { readonly kind: 'route'; readonly equals: string };

const MAX_EXPRESSION = 200;

/** A sentence when the expression's shape can backtrack without bound, else undefined. */
export function costlyShape(source: string): string | undefined {
  if (/\\[1-9]|\\k</.test(source)) return 'back-references are not accepted';
  // For each open group: does it hold a quantifier or an alternation?
  const groups: Array<{ quantified: boolean; alternation: boolean }> = [];
  let lastGroup: { quantified: boolean; alternation: boolean } | undefined;
  let inClass = false;
  for (let i = 0; i < source.length; i++) {
    const c = source[i]!;
    if (c === '\\') { i++; lastGroup = undefined; continue; }
    if (inClass) { if (c === ']') inClass = false; continue; }
    if (c === '[') { inClass = true; lastGroup = undefined; continue; }
    if (c === '(') {
      // Look-arounds are outside what V8's linear engine runs (src/workers/regexp-fallback.ts),
      // so nothing would bound their backtracking.
      if (/^\(\?<?[=!]/.test(source.slice(i, i + 4))) return 'look-aheads and look-behinds are not accepted';
      groups.push({ quantified: false, alternation: false });
      lastGroup = undefined;
      continue;
    }
    if (c === ')') {
      lastGroup = groups.pop();
      // A group holds what its inner groups hold: `((a+))+` repeats a repetition as `(a+)+` does.
      const outer = groups[groups.length - 1];
      if (outer && lastGroup) {
        outer.quantified ||= lastGroup.quantified;
        outer.alternation ||= lastGroup.alternation;
      }
      continue;
    }
    if (c === '|') { const g = groups[groups.length - 1]; if (g) g.alternation = true; continue; }
    const prev = source[i - 1];
    // `?` is a quantifier unless it opens group syntax `(?:` or makes a quantifier lazy.
    const optional = c === '?' && prev !== '(' && prev !== '*' && prev !== '+' && prev !== '?' && prev !== '}';
    const quantifier = c === '*' || c === '+' || optional || (c === '{' && /^\{\d+(,\d*)?\}/.test(source.slice(i)));
    if (quantifier) {
      // An optional group (`(…)?`) is tried at most twice: only repetitions multiply the paths.
      if (!optional && lastGroup && (lastGroup.quantified || lastGroup.alternation)) {
        return 'a repeated group may not itself hold a repetition or an alternation (it could take exponential time)';
      }
      const g = groups[groups.length - 1];
      if (g) g.quantified = true;
      if (lastGroup) { const outer = groups[groups.length - 1]; if (outer) outer.quantified = true; }
    }
    lastGroup = undefined;
  }
  return undefined;
}

/** Compiles a filter expression or refuses it with the reason. */
export function compileExpression(key: string, source: string): RegExp {
  const field = `meta.${key}`;
  if (source.length === 0 || source.length > MAX_EXPRESSION) {
    throw new GatewayError('filter.regex-invalid', `The expression for ${field} must be 1 to ${MAX_EXPRESSION} characters.`, field);
  }
  const costly = costlyShape(source);
  if (costly) throw new GatewayError('filter.regex-invalid', `The expression for ${field} is refused: ${costly}.`, field);
  try {
    return new RegExp(source);
  } catch (err) {
    throw new GatewayError('filter.regex-invalid', `The expression for ${field} does not compile: ${(err as Error).message.replace(/^Invalid regular expression: /, '')}.`, field);
  }
}

/** Reads the list's query string. Unknown parameters are refused (a typo is not "no filter"). */
export function parseFilters(query: URLSearchParams, also: readonly string[] = []): Filter[] {
  const filters: Filter[] = [];
  const seen = new Set<string>();
  for (const [name, value] of query) {
    if (also.includes(name)) continue;
    // As every list of the API: which of two values was meant is not guessed.
    if (seen.has(name)) throw new GatewayError('filter.invalid', `${name.slice(0, 100)} is given once.`, name.slice(0, 100));
    seen.add(name);
    if (name.startsWith('meta.') && name.length > 5) {
      const key = name.slice(5);
      if (value.startsWith('~')) {
        compileExpression(key, value.slice(1));
        filters.push({ kind: 'meta-regex', key, source: value.slice(1) });
      } else {
        filters.push({ kind: 'meta', key, equals: value });
      }
    } else if (name === 'tenant' || name === 'route') {
      filters.push({ kind: name, equals: value });
    } else {
      throw new GatewayError('filter.invalid', `"${name}" is not a filter; use meta.<key>=<value>, meta.<key>=~<expression>, tenant or route${also.length ? ` (and ${also.join(', ')})` : ''}.`, name);
    }
  }
  return filters;
}

export interface Filterable {
  readonly metadata: Readonly<Record<string, string>>;
  readonly organisation: string | null;
  readonly routeId: string;
}

/**
 * A schedule's metadata value under a caller's key: own keys only, so `meta.constructor` or
 * `meta.__proto__` never reads what every object inherits.
 */
function metaValue(s: Filterable, key: string): string | undefined {
  return Object.hasOwn(s.metadata, key) ? s.metadata[key] : undefined;
}

/** A predicate for already-validated filters. */
export function matcher(filters: readonly Filter[]): (s: Filterable) => boolean {
  const tests = filters.map((f): ((s: Filterable) => boolean) => {
    switch (f.kind) {
      case 'meta': return (s) => metaValue(s, f.key) === f.equals;
      case 'meta-regex': {
        const re = new RegExp(f.source);
        return (s) => { const v = metaValue(s, f.key); return typeof v === 'string' && re.test(v); };
      }
      case 'tenant': return (s) => s.organisation === f.equals;
      case 'route': return (s) => s.routeId === f.equals;
    }
  });
  return (s) => tests.every((t) => t(s));
}
