/**
 * Path templates of a route (`GET /orders/{id}`), compiled once and matched against the path a
 * call forwards. Endpoint audit finds its audited operation with it, the access log and the
 * metrics name the endpoint of a call with it. Pure and allocation-light: a match tests each
 * template of the method once at most, the most specific first.
 */
import { templateVariables } from '../audit/rules.ts';

/** One template segment: a literal, literals and variables mixed, or a whole-segment variable. */
type Segment =
  | { readonly kind: 0; readonly text: string }
  | { readonly kind: 1; readonly pattern: RegExp; readonly names: readonly string[] }
  | { readonly kind: 2; readonly name: string };

export interface Templated {
  /** Upper-case method, or `*` for any. */
  readonly method: string;
  readonly template: string;
}

export interface TemplateMatch<T> {
  readonly value: T;
  /** Path variables, percent-decoded per segment. */
  readonly variables: Readonly<Record<string, string>>;
}

interface Compiled<T> {
  readonly value: T;
  readonly template: string;
  readonly segments: readonly Segment[];
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

export function splitPath(path: string): string[] {
  let p = path;
  // One trailing slash is ignored, as the endpoint rules do: `/orders/1/` is `/orders/1`.
  if (p.length > 1 && p.endsWith('/')) p = p.slice(0, -1);
  return p === '/' || p === '' ? [] : p.slice(1).split('/');
}

function compileSegment(text: string): Segment {
  const names = templateVariables(text);
  if (names.length === 0) return { kind: 0, text };
  if (names.length === 1 && text === `{${names[0]}}`) return { kind: 2, name: names[0]! };
  const source = text.split(/\{[^{}/]+\}/).map(escapeRegExp).join('(.+?)');
  return { kind: 1, pattern: new RegExp(`^${source}$`, 's'), names };
}

/**
 * Literal before mixed before variable, at the first segment where two templates differ; then
 * the template's text, so the order never depends on how the store kept the keys.
 */
function bySpecificity<T>(a: Compiled<T>, b: Compiled<T>): number {
  for (let i = 0; i < a.segments.length && i < b.segments.length; i++) {
    const d = a.segments[i]!.kind - b.segments[i]!.kind;
    if (d !== 0) return d;
  }
  return a.template < b.template ? -1 : a.template > b.template ? 1 : 0;
}

export function decodeSegment(segment: string): string {
  if (!segment.includes('%')) return segment;
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

function set(target: Record<string, string>, key: string, value: string): true {
  // defineProperty: a variable named `__proto__` is a key like any other.
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  return true;
}

export class TemplateIndex<T extends Templated> {
  readonly #byMethod = new Map<string, Compiled<T>[]>();
  readonly size: number;

  constructor(values: readonly T[]) {
    for (const value of values) {
      let list = this.#byMethod.get(value.method);
      if (!list) this.#byMethod.set(value.method, (list = []));
      list.push({ value, template: value.template, segments: splitPath(value.template).map(compileSegment) });
    }
    for (const list of this.#byMethod.values()) list.sort(bySpecificity);
    this.size = values.length;
  }

  /** The template of `method` (upper-case) on `servicePath` (as forwarded, percent-encoded); `*` templates answer any method. */
  match(method: string, servicePath: string): TemplateMatch<T> | undefined {
    const own = this.#byMethod.get(method);
    const any = this.#byMethod.get('*');
    if (own === undefined && any === undefined) return undefined;
    const segments = splitPath(servicePath).map(decodeSegment);
    return (own && find(own, segments)) ?? (any && find(any, segments));
  }
}

function find<T>(list: readonly Compiled<T>[], segments: readonly string[]): TemplateMatch<T> | undefined {
  for (const c of list) {
    if (c.segments.length !== segments.length) continue;
    const variables: Record<string, string> = {};
    let ok = true;
    for (let i = 0; ok && i < segments.length; i++) {
      const s = c.segments[i]!;
      const value = segments[i]!;
      if (s.kind === 0) ok = s.text === value;
      else if (s.kind === 2) ok = value !== '' && set(variables, s.name, value);
      else {
        const m = s.pattern.exec(value);
        ok = m !== null && s.names.every((n, k) => set(variables, n, m[k + 1]!));
      }
    }
    if (ok) return { value: c.value, variables };
  }
  return undefined;
}
