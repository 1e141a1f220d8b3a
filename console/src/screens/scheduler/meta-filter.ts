/**
 * The metadata filter as an operator types it: `team=billing env=~^prod-`, conditions separated
 * by spaces, each `key=value` (exact) or `key=~expression` (regular expression), all of which
 * must hold. It becomes the list's query parameters (`meta.team=billing&meta.env=~^prod-`, see
 * docs/schedules.md "Filters"), so the API judges an expression and its refusal is the one shown.
 *
 * The live feed filters on organisation and route only, so the screen also applies the
 * conditions to what the feed sends, with the same rules as the gateway
 * (src/core/schedules/filters.ts `matcher`): own keys only, exact text, or the expression's test.
 */

export interface MetaCondition {
  readonly key: string;
  readonly equals?: string;
  readonly expression?: string;
}

export type Parsed = { readonly conditions: MetaCondition[] } | { readonly error: string };

export function parseMetaFilter(text: string): Parsed {
  const conditions: MetaCondition[] = [];
  for (const part of text.trim().split(/\s+/)) {
    if (part === '') continue;
    const eq = part.indexOf('=');
    // `meta.team=…` is the API's spelling of the same condition.
    const key = (eq < 0 ? part : part.slice(0, eq)).replace(/^meta\./, '');
    if (eq < 0 || key === '') {
      return { error: `"${part}" is not a condition: write key=value, or key=~expression for a regular expression.` };
    }
    const value = part.slice(eq + 1);
    conditions.push(value.startsWith('~') ? { key, expression: value.slice(1) } : { key, equals: value });
  }
  return { conditions };
}

/** The conditions as the list's query parameters (a key may be named twice). */
export function metaParams(conditions: readonly MetaCondition[], into = new URLSearchParams()): URLSearchParams {
  for (const c of conditions) into.append(`meta.${c.key}`, c.expression !== undefined ? `~${c.expression}` : c.equals ?? '');
  return into;
}

/** A predicate on a schedule's metadata; the API has already accepted the expressions. */
export function metaMatcher(conditions: readonly MetaCondition[]): (metadata: Readonly<Record<string, string>>) => boolean {
  const tests = conditions.map((c) => {
    let re: RegExp | null = null;
    if (c.expression !== undefined) {
      try {
        re = new RegExp(c.expression);
      } catch {
        // The API compiled it; a browser that cannot shows nothing rather than everything.
        return () => false;
      }
    }
    return (m: Readonly<Record<string, string>>) => {
      const v = Object.hasOwn(m, c.key) ? m[c.key] : undefined;
      if (typeof v !== 'string') return false;
      return re ? re.test(v) : v === c.equals;
    };
  });
  return (m) => tests.every((t) => t(m));
}
