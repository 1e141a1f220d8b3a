/**
 * The endpoint of a call as the metrics name it (spec 1.5 rules 3-4): a template such as
 * `GET /orders/{id}`, never a raw path. A template the route declares (OpenAPI document, endpoint
 * rules) wins; a path it declares for another method keeps that template (marked deduced);
 * otherwise one is deduced from the path's shape and marked so.
 *
 * Deduction works in two steps. First each segment that looks like an identifier (segments.ts:
 * numbers, UUIDs, hex, ULIDs, long tokens, e-mails, IP addresses, anything percent-encoded or
 * longer than 40 characters, an address or a long number among other text) becomes `{id}` on
 * sight; a segment's matrix parameters (`;v=2`) are left out as the query is. Then a cardinality fold: a trie of the
 * route's deduced paths remembers, under each parent, at most FOLD_AT distinct literal segments;
 * the next distinct one folds that position into `{id}` for good, its literals are forgotten,
 * and the labels already issued under them are renamed so their statistics merge
 * (`renamed`, old label to new, for the ring's `rename`).
 *
 * A position right after a collection word (a plural such as `users`, segments.ts) folds on
 * sight too: `/users/alice` is `/users/{id}` from the first call, at the price of a coarser label
 * for a literal there (`/orders/search` is `/orders/{id}`; declare it to keep it apart).
 *
 * Known limit, by construction: elsewhere a literal is a label until its position has seen
 * FOLD_AT + 1 distinct values. A name under a word that reads as no plural (`/profile/alice`) is a
 * label until three more distinct ones arrived; if none ever does, it stays one for as long as the
 * metrics keep it (an hour of curves, seventy minutes of endpoint history). E-mails and IP
 * addresses are never labels: they fold on sight. Each node of a cluster folds on its own.
 *
 * Bounds: at most TEMPLATE_BUDGET labels per route (declared and deduced); past it every call
 * shares OTHER. The trie holds at most FOLD_AT literals a position and NODE_CAP nodes; a path
 * deeper than MAX_DEPTH segments, with a method outside the standard ones, or needing a node
 * past the cap is named OTHER. A label unused for LABEL_TTL_MS leaves the budget on `sweep`,
 * once the ring no longer holds anything under it, and the trie's nodes only it used go too;
 * those leading to a folded position stay, so a fold is for good.
 */
import type { TemplateIndex, Templated } from '../routes/template-index.ts';
import { splitPath } from '../routes/template-index.ts';
import { endpointLabel } from '../routes/endpoints.ts';
import { ID, isCollectionWord, isIdentifier, withoutParameters } from './segments.ts';

/** Distinct literals a position keeps; one more folds it into `{id}`. */
export const FOLD_AT = 3;
/** Labels a route may have at once (spec section 8). */
export const TEMPLATE_BUDGET = 200;
/** The label every call past the budget shares; always marked deduced. */
export const OTHER = '(other)';
export const NODE_CAP = 2_000;
export const MAX_DEPTH = 16;
/** Seventy minutes of endpoint history and one more: nothing in the ring still uses the label. */
export const LABEL_TTL_MS = 71 * 60_000;

const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'TRACE', 'CONNECT']);

export interface EndpointName {
  readonly template: string;
  readonly deduced: boolean;
  /** Labels this call's fold retired, old to new: the ring merges their statistics. */
  readonly renamed: ReadonlyMap<string, string> | null;
}

class Node {
  /** null once the position folded: its literals are forgotten. */
  literals: Map<string, Node> | null = new Map();
  id: Node | null = null;
}

interface Label {
  readonly deduced: boolean;
  last: number;
}

export class RouteEndpoints {
  readonly #root = new Node();
  #nodes = 1;
  #folded = false;
  readonly #labels = new Map<string, Label>();

  constructor(private declared: TemplateIndex<Templated> | undefined = undefined) {}

  /** The route's declarations changed: later calls match the new ones; the trie stays. */
  redeclare(declared: TemplateIndex<Templated> | undefined): void {
    this.declared = declared;
  }

  /** Labels issued and not swept. */
  get size(): number {
    return this.#labels.size;
  }

  /** Nodes in the trie, at most NODE_CAP. */
  get nodes(): number {
    return this.#nodes;
  }

  /** The label of a call: `method` upper-case, `servicePath` as forwarded, `at` epoch ms. */
  name(method: string, servicePath: string, at: number): EndpointName {
    if (!METHODS.has(method)) return bucket;
    const path = stripQuery(servicePath);
    const declared = endpointLabel(method, this.declared, path);
    if (declared !== null) return this.#issue(declared, false, at, null);
    // A path the route declares for another method keeps its declared shape (`POST /users/alice`
    // under a declared `GET /users/{name}` is `POST /users/{name}`): deduced, since the method is not.
    const shaped = this.#declaredShape(path);
    if (shaped !== null) return this.#issue(`${method} ${shaped}`, true, at, null);
    const segments = splitPath(path).map(withoutParameters);
    if (segments.length > MAX_DEPTH) return bucket;
    this.#folded = false;
    const shape = this.#insert(segments);
    const renamed = this.#folded ? this.#renames() : null;
    if (shape === null) return renamed === null ? bucket : { ...bucket, renamed };
    return this.#issue(`${method} /${shape.join('/')}`, true, at, renamed);
  }

  /** The template the route declares for this path under any standard method, or null. */
  #declaredShape(path: string): string | null {
    const index = this.declared;
    if (index === undefined) return null;
    for (const m of METHODS) {
      const found = index.match(m, path);
      if (found !== undefined) return found.value.template;
    }
    return null;
  }

  /**
   * Forgets labels unused since `now - LABEL_TTL_MS`, freeing their place in the budget, and the
   * trie's nodes no remaining label passes through: a flood of distinct paths that filled the trie
   * once does not name every new endpoint OTHER after its labels are gone. Folds stay folded.
   */
  sweep(now: number): void {
    let swept = false;
    for (const [label, l] of this.#labels) {
      if (l.last >= now - LABEL_TTL_MS) continue;
      this.#labels.delete(label);
      swept ||= l.deduced;
    }
    if (swept) this.#prune();
  }

  /**
   * Keeps the nodes on the path of a deduced label still issued, and those on the way to a folded
   * position (a fold is for good: a quiet hour must not give the next names a literal window
   * again); recounts the trie.
   */
  #prune(): void {
    const kept = new Set<Node>([this.#root]);
    keepFolds(this.#root, kept);
    for (const [label, l] of this.#labels) {
      if (!l.deduced) continue;
      let node: Node | null | undefined = this.#root;
      for (const s of splitPath(label.slice(label.indexOf(' ') + 1))) {
        node = node.literals !== null && s !== ID ? node.literals.get(s) : node.id;
        if (!node) break;
        kept.add(node);
      }
    }
    this.#nodes = cut(this.#root, kept);
  }

  #issue(template: string, deduced: boolean, at: number, renamed: ReadonlyMap<string, string> | null): EndpointName {
    const known = this.#labels.get(template);
    if (known !== undefined) {
      known.last = Math.max(known.last, at);
      return { template, deduced: known.deduced, renamed };
    }
    if (this.#labels.size >= TEMPLATE_BUDGET) return { ...bucket, renamed };
    this.#labels.set(template, { deduced, last: at });
    return { template, deduced, renamed };
  }

  /** Walks the path into the trie, growing and folding it; the shape, or null past NODE_CAP. */
  #insert(segments: readonly string[]): string[] | null {
    const shape: string[] = [];
    let node = this.#root;
    let after: string | null = null;
    for (const s of segments) {
      let literal = node.literals !== null && !isIdentifier(s);
      if (literal && after !== null && isCollectionWord(after)) {
        // A member of a collection (`/users/alice`): a name a caller chose, never a label.
        this.#fold(node);
        literal = false;
      } else if (literal && !node.literals!.has(s) && node.literals!.size >= FOLD_AT) {
        // One distinct value too many: the position is an identifier from now on.
        this.#fold(node);
        literal = false;
      }
      let next = literal ? node.literals!.get(s) : node.id;
      if (next === undefined || next === null) {
        if (this.#nodes >= NODE_CAP) return null;
        this.#nodes++;
        next = new Node();
        if (literal) node.literals!.set(s, next);
        else node.id = next;
      }
      shape.push(literal ? s : ID);
      after = literal ? s : null;
      node = next;
    }
    return shape;
  }

  /** Folds a position: its literal subtrees merge into its `{id}` subtree and are forgotten. */
  #fold(node: Node): void {
    const literals = node.literals;
    if (literals === null) return;
    node.literals = null;
    this.#folded = true;
    for (const child of literals.values()) node.id = this.#graft(node.id, child);
  }

  /** Merges `from` into `into` (either may be absent); a merged position past FOLD_AT folds. */
  #graft(into: Node | null, from: Node): Node {
    if (into === null) return from;
    this.#nodes--;
    if (from.id !== null) into.id = this.#graft(into.id, from.id);
    if (into.literals === null || from.literals === null) {
      if (from.literals !== null) for (const child of from.literals.values()) into.id = this.#graft(into.id, child);
      this.#fold(into);
      return into;
    }
    for (const [s, child] of from.literals) into.literals.set(s, this.#graft(into.literals.get(s) ?? null, child));
    if (into.literals.size > FOLD_AT) this.#fold(into);
    return into;
  }

  /** An issued deduced label's template now (the folds since it was issued applied). */
  current(label: string): string {
    const space = label.indexOf(' ');
    return `${label.slice(0, space)} /${this.#resolve(splitPath(label.slice(space + 1))).join('/')}`;
  }

  /** Where each issued deduced label lands after a fold; only those that moved. */
  #renames(): ReadonlyMap<string, string> | null {
    const renamed = new Map<string, string>();
    for (const [label, l] of [...this.#labels]) {
      if (!l.deduced) continue;
      const to = this.current(label);
      if (to === label) continue;
      renamed.set(label, to);
      this.#labels.delete(label);
      const kept = this.#labels.get(to);
      if (kept === undefined) this.#labels.set(to, { deduced: true, last: l.last });
      else kept.last = Math.max(kept.last, l.last);
    }
    return renamed.size === 0 ? null : renamed;
  }

  /** The current shape of an issued label's segments (literals or `{id}`), without growing the trie. */
  #resolve(segments: readonly string[]): string[] {
    const shape: string[] = [];
    let node: Node | undefined = this.#root;
    for (const s of segments) {
      if (node === undefined) shape.push(s);
      else if (node.literals !== null && s !== ID) {
        shape.push(s);
        node = node.literals.get(s);
      } else {
        shape.push(ID);
        node = node.id ?? undefined;
      }
    }
    return shape;
  }
}

const bucket: EndpointName = { template: OTHER, deduced: true, renamed: null };

/**
 * Deduced labels of several nodes, each folded on its own node, folded together as one node would
 * fold them (a position with more than FOLD_AT words across the nodes is `{id}`): the template
 * each label is summed under. A cluster of N nodes then never lists 3 × N words at a position.
 */
export function foldAcross(labels: Iterable<string>): Map<string, string> {
  const issued = [...new Set(labels)].filter((l) => l !== OTHER && l.includes(' /'));
  const together = new RouteEndpoints();
  for (const l of issued) {
    const space = l.indexOf(' ');
    together.name(l.slice(0, space), l.slice(space + 1), 0);
  }
  return new Map(issued.map((l) => [l, together.current(l)]));
}

/** Adds to `kept` each node on the way to a folded position below `node`; true when there is one. */
function keepFolds(node: Node, kept: Set<Node>): boolean {
  let holds = node.literals === null;
  if (node.literals !== null) for (const child of node.literals.values()) if (keepFolds(child, kept)) holds = true;
  if (node.id !== null && keepFolds(node.id, kept)) holds = true;
  if (holds) kept.add(node);
  return holds;
}

/** Drops the children of `node` not in `kept`; the nodes left in its subtree, itself included. */
function cut(node: Node, kept: ReadonlySet<Node>): number {
  let count = 1;
  if (node.literals !== null) {
    for (const [s, child] of node.literals) {
      if (kept.has(child)) count += cut(child, kept);
      else node.literals.delete(s);
    }
  }
  if (node.id !== null) {
    if (kept.has(node.id)) count += cut(node.id, kept);
    else node.id = null;
  }
  return count;
}

function stripQuery(path: string): string {
  const q = path.search(/[?#]/);
  return q === -1 ? path : path.slice(0, q);
}
