/**
 * The role hierarchy: a role grants the roles it implies, transitively. A role's closure is
 * computed the first time it is asked for, then kept; `expand` unions a few such lists and
 * remembers the answer, because the same role sets come back on every request of the same callers.
 */
import type { RoleView } from '../core/model.ts';

/** Bounds the memo against callers presenting ever-new role sets; the working set is far smaller. */
const MEMO_LIMIT = 10_000;
const EMPTY: readonly string[] = Object.freeze([]);

export class RoleGraph {
  readonly #graph: ReadonlyMap<string, readonly string[]>;
  /** Each role asked about → itself plus everything it implies, sorted; filled on first use. */
  readonly #closure = new Map<string, readonly string[]>();
  readonly #memo = new Map<string, readonly string[]>();

  constructor(roles: readonly RoleView[]) {
    this.#graph = adjacency(roles);
  }

  /** The given roles plus everything they imply, transitively; unknown names are kept as themselves; sorted, deduplicated. Memoised per input (key = sorted join). Must terminate even if the catalogue has a cycle. */
  expand(roles: readonly string[]): readonly string[] {
    if (roles.length === 0) return EMPTY;
    if (roles.length === 1) {
      const only = roles[0]!;
      return this.#closureOf(only);
    }
    // Identities carry sorted roles, so the copy and sort are usually skipped.
    const key = (isSorted(roles) ? roles : [...roles].sort()).join('\u0000');
    const known = this.#memo.get(key);
    if (known !== undefined) return known;
    const all = new Set<string>();
    for (const role of roles) for (const r of this.#closureOf(role)) all.add(r);
    return this.#remember(key, Object.freeze([...all].sort()));
  }

  /** Capped like the memo: unknown names a caller presents land here too. */
  #closureOf(role: string): readonly string[] {
    const known = this.#closure.get(role);
    if (known !== undefined) return known;
    // Plain reachability with a visited set: a cycle just revisits nothing, so it terminates.
    const seen = new Set<string>([role]);
    const stack = [role];
    while (stack.length > 0) {
      for (const next of this.#graph.get(stack.pop()!) ?? EMPTY) {
        if (!seen.has(next)) {
          seen.add(next);
          stack.push(next);
        }
      }
    }
    const closure = Object.freeze([...seen].sort());
    if (this.#closure.size >= MEMO_LIMIT) this.#closure.clear();
    this.#closure.set(role, closure);
    return closure;
  }

  #remember(key: string, value: readonly string[]): readonly string[] {
    if (this.#memo.size >= MEMO_LIMIT) this.#memo.clear();
    this.#memo.set(key, value);
    return value;
  }
}

/** A cycle in the implies graph, as a path that starts and ends with the same role (['a','b','a']), or undefined. Self-loops count (['a','a']). */
export function findCycle(roles: readonly RoleView[]): string[] | undefined {
  const graph = adjacency(roles);
  const done = new Set<string>();
  // Iterative DFS: a long implication chain must not overflow the call stack.
  for (const start of graph.keys()) {
    if (done.has(start)) continue;
    const path: string[] = [start];
    const onPath = new Map<string, number>([[start, 0]]);
    const cursor: number[] = [0];
    while (path.length > 0) {
      const depth = path.length - 1;
      const node = path[depth]!;
      const next = (graph.get(node) ?? EMPTY)[cursor[depth]!];
      if (next === undefined) {
        done.add(node);
        onPath.delete(node);
        path.pop();
        cursor.pop();
        continue;
      }
      cursor[depth]!++;
      const at = onPath.get(next);
      if (at !== undefined) return [...path.slice(at), next];
      if (done.has(next)) continue;
      onPath.set(next, path.length);
      path.push(next);
      cursor.push(0);
    }
  }
  return undefined;
}

/**
 * True when `held` contains at least one of `needed`. An empty `needed` admits nobody: a rule
 * that lists no roles is a closed door, never an open one (open routes have no rule at all).
 */
export function holdsAny(held: readonly string[], needed: readonly string[]): boolean {
  for (const role of needed) if (held.includes(role)) return true;
  return false;
}

/** name → implied names; a role listed twice merges its lists; implied names not in the catalogue are leaves. */
function adjacency(roles: readonly RoleView[]): Map<string, readonly string[]> {
  const graph = new Map<string, string[]>();
  for (const role of roles) {
    const list = graph.get(role.name);
    if (list === undefined) graph.set(role.name, [...role.implies]);
    else list.push(...role.implies);
  }
  for (const list of [...graph.values()]) {
    for (const name of list) if (!graph.has(name)) graph.set(name, []);
  }
  return graph;
}

function isSorted(list: readonly string[]): boolean {
  for (let i = 1; i < list.length; i++) if (list[i - 1]! > list[i]!) return false;
  return true;
}
