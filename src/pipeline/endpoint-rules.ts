/**
 * Per-endpoint role rules inside a route: `METHOD /orders/{id}`. Rules compile once into a
 * segment trie per method, so a request visits only the trie nodes its segments can reach, however
 * many rules the route has (up to 500), instead of testing every rule in turn.
 */
import type { EndpointRuleView } from '../core/model.ts';

const PARAM = /^\{([A-Za-z_][A-Za-z0-9_]*)\}$/;

/** undefined when valid, else a sentence saying what is wrong. Valid: starts with '/', segments literal or exactly `{name}` with name [A-Za-z_][A-Za-z0-9_]*, no empty, "." or ".." segment, no trailing slash, no '?', '#', space, control character or backslash, no duplicate param names. '/' alone is the root. */
export function templateProblem(path: string): string | undefined {
  if (!path.startsWith('/')) return `"${path}" must start with "/".`;
  if (path.includes('?') || path.includes('#')) return `"${path}" must not hold "?" or "#"; a template matches the path only.`;
  if (path === '/') return undefined;
  if (path.endsWith('/')) return `"${path}" must not end with "/".`;
  const names = new Set<string>();
  const segments = path.slice(1).split('/');
  if (/[\s\\\u0000-\u001f\u007f]/.test(path)) return `"${path}" must not hold spaces, control characters or a backslash.`;
  for (const [i, segment] of segments.entries()) {
    if (segment === '') return `"${path}" has an empty segment (position ${i + 1}).`;
    // Request paths holding such a segment are refused (path.invalid): the rule could never apply.
    if (segment === '.' || segment === '..') return `"${path}" has a "${segment}" segment, which no request path the gateway routes holds.`;
    if (!segment.includes('{') && !segment.includes('}')) continue;
    const name = PARAM.exec(segment)?.[1];
    if (name === undefined) {
      return `"${segment}" is not a parameter: write a whole segment as {name}, the name being a letter or "_" followed by letters, digits or "_".`;
    }
    if (names.has(name)) return `"${path}" uses the parameter {${name}} twice.`;
    names.add(name);
  }
  return undefined;
}

interface Compiled {
  readonly rule: EndpointRuleView;
  readonly literals: number;
  /** Preference among rules of the same pattern: the exact method, then GET for HEAD, then '*'. */
  readonly rank: number;
  /** Input position: the last tie-break, so duplicates resolve the same way every time. */
  readonly order: number;
}

interface TrieNode {
  /** Literal segment → child; null while no template has a literal here. */
  lits: Map<string, TrieNode> | null;
  param: TrieNode | null;
  /** Rules whose template ends here, best first. */
  readonly rules: Compiled[];
}

/** Reused for every match: segment boundaries, two ints per segment. Matching is synchronous. */
let bounds = new Int32Array(64);

export class EndpointRules {
  readonly #byMethod = new Map<string, TrieNode>();
  /** Methods no rule names: only '*' rules apply. */
  readonly #anyMethod: TrieNode;
  readonly #empty: boolean;

  constructor(rules: readonly EndpointRuleView[]) {
    this.#empty = rules.length === 0;
    const methods = new Set(rules.map((r) => r.method).filter((m) => m !== '*'));
    if (methods.has('GET')) methods.add('HEAD');
    for (const method of methods) this.#byMethod.set(method, trie(rules, method));
    this.#anyMethod = trie(rules, '*');
  }

  /** The rule that applies to this request, or undefined. method upper-case; path = servicePath (percent-encoded, as forwarded). Among matching rules the most specific wins: more literal segments first (compare left to right: a literal beats a param at the first position they differ), then an exact method beats '*'. HEAD matches a GET rule. A trailing slash on the request is ignored ('/orders/1/' is '/orders/1'). */
  match(method: string, path: string): EndpointRuleView | undefined {
    if (this.#empty || path.charCodeAt(0) !== 47 /* '/' */) return undefined;
    const root = this.#byMethod.get(method) ?? this.#anyMethod;
    return search(root, 0, segmentBounds(path, path.includes(';')), path, path.includes('%'))?.rule;
  }
}

function rank(ruleMethod: string, method: string): number {
  if (ruleMethod === method) return 0;
  if (method === 'HEAD' && ruleMethod === 'GET') return 1;
  return ruleMethod === '*' ? 2 : -1;
}

function trie(rules: readonly EndpointRuleView[], method: string): TrieNode {
  const root: TrieNode = { lits: null, param: null, rules: [] };
  rules.forEach((rule, order) => {
    const r = rank(rule.method, method);
    if (r < 0) return;
    let node = root;
    let literals = 0;
    const segments = rule.path === '/' ? [] : rule.path.slice(1).split('/');
    for (const segment of segments) {
      if (PARAM.test(segment)) {
        node = node.param ??= { lits: null, param: null, rules: [] };
        continue;
      }
      literals++;
      node.lits ??= new Map();
      let child = node.lits.get(segment);
      if (child === undefined) node.lits.set(segment, (child = { lits: null, param: null, rules: [] }));
      node = child;
    }
    node.rules.push({ rule, literals, rank: r, order });
  });
  sortLeaves(root);
  return root;
}

function sortLeaves(node: TrieNode): void {
  node.rules.sort((a, b) => a.rank - b.rank || a.order - b.order);
  if (node.param !== null) sortLeaves(node.param);
  if (node.lits !== null) for (const child of node.lits.values()) sortLeaves(child);
}

/**
 * Best rule under `node` for segments from `depth` on. The literal branch is searched first and
 * kept unless the param branch has strictly more literals: most literals wins, and among equals
 * the one with a literal at the first differing position, which is the literal branch.
 */
function search(node: TrieNode, depth: number, count: number, path: string, encoded: boolean): Compiled | undefined {
  if (depth === count) return node.rules[0];
  const start = bounds[2 * depth]!;
  const stop = bounds[2 * depth + 1]!;
  // No template segment is empty, so an empty request segment matches nothing.
  if (stop === start) return undefined;
  let best: Compiled | undefined;
  if (node.lits !== null) {
    const text = segmentText(path, start, stop, encoded);
    const child = text === undefined ? undefined : node.lits.get(text);
    if (child !== undefined) best = search(child, depth + 1, count, path, encoded);
  }
  if (node.param !== null) {
    const alt = search(node.param, depth + 1, count, path, encoded);
    if (alt !== undefined && (best === undefined || alt.literals > best.literals)) best = alt;
  }
  return best;
}

/** The segment as literals compare to it: percent-decoded; undefined when its escapes are malformed. */
function segmentText(path: string, start: number, stop: number, encoded: boolean): string | undefined {
  const raw = path.slice(start, stop);
  if (!encoded || !hasPercent(path, start, stop)) return raw;
  try {
    return decodeURIComponent(raw);
  } catch {
    return undefined;
  }
}

/**
 * Fills `bounds` with [start, end) of each segment; returns the count. One trailing slash is
 * dropped. With `params`, a segment ends at its first ';': servlet containers serve `/admin;x`
 * as `/admin`, so the rules judge it as `/admin` (the canonical path has no segment of
 * parameters alone).
 */
function segmentBounds(path: string, params: boolean): number {
  let end = path.length;
  if (end > 1 && path.charCodeAt(end - 1) === 47) end--;
  if (end <= 1) return 0;
  let count = 0;
  let start = 1;
  for (;;) {
    let stop = path.indexOf('/', start);
    if (stop < 0 || stop > end) stop = end;
    if (2 * count + 2 > bounds.length) {
      const grown = new Int32Array(bounds.length * 2);
      grown.set(bounds);
      bounds = grown;
    }
    let text = stop;
    if (params) {
      const semi = path.indexOf(';', start);
      if (semi >= 0 && semi < stop) text = semi;
    }
    bounds[2 * count] = start;
    bounds[2 * count + 1] = text;
    count++;
    if (stop >= end) return count;
    start = stop + 1;
  }
}

function hasPercent(path: string, start: number, stop: number): boolean {
  for (let i = start; i < stop; i++) if (path.charCodeAt(i) === 37 /* '%' */) return true;
  return false;
}
