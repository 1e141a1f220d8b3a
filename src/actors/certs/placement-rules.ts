/**
 * The placement rules (spec 1.2 rules 4, 10, 20), judged where a certificate is placed and again
 * where a file-system pair renewed on disk would take the places of the pair it replaces: two
 * certificates never answer one name on a plane, and the internal plane presents only a name the
 * services call it by.
 */
import { covers } from '../../core/tls/names.ts';
import { PLANE_NAMES, type Placement, type TlsPlane } from './messages.ts';

/**
 * A name of `names` that `other` already answers, or undefined. Overlap counts both ways: a
 * wildcard arriving where one of its names is served clashes too, so a handshake never has two
 * answers that depend on which certificate came first.
 */
export function clash(names: readonly string[], other: readonly string[]): string | undefined {
  return names.find((n) => (n.startsWith('*.')
    ? other.some((o) => o === n || (!o.startsWith('*.') && covers([n], o)))
    : covers(other, n)));
}

/** The sentence refusing `names` on the internal plane, or null when one of them is a name it is called by. */
export function internalNameProblem(names: readonly string[], internalNames: readonly string[]): string | null {
  if (names.some((n) => internalNames.some((i) => covers([n], i)))) return null;
  return internalNames.length === 0
    ? 'The internal plane takes only a certificate carrying a name the services call it by, and none is known: set GATEWAY_INTERNAL_NAMES.'
    : `The internal plane takes only a certificate carrying a name the services call it by (${internalNames.join(', ')}); this one carries ${names.join(', ')}.`;
}

export interface NamedCertificate {
  readonly id: string;
  readonly name: string;
  readonly names: readonly string[];
}

/** Each certificate other than `id` placed on `plane` that answers one of `names`, with the name. */
export function takenOn<C extends NamedCertificate>(
  id: string, names: readonly string[], plane: TlsPlane,
  placements: readonly Placement[], certificates: ReadonlyMap<string, C>,
): Array<{ other: C; name: string }> {
  const taken: Array<{ other: C; name: string }> = [];
  for (const p of placements) {
    if (p.plane !== plane || p.id === id) continue;
    const other = certificates.get(p.id);
    const name = other ? clash(names, other.names) : undefined;
    if (other !== undefined && name !== undefined) taken.push({ other, name });
  }
  return taken;
}

/**
 * Why `names` (a renewed pair's) cannot be presented where certificate `id` is placed, or null.
 * A renewal is not a placement: it cannot replace anyone, so any clash holds it back.
 */
export function renewalProblem(
  id: string, names: readonly string[], placements: readonly Placement[],
  certificates: ReadonlyMap<string, NamedCertificate>, internalNames: readonly string[],
): string | null {
  for (const p of placements) {
    if (p.id !== id) continue;
    if (p.plane === 'internal') {
      const problem = internalNameProblem(names, internalNames);
      if (problem !== null) return problem;
    }
    const [taken] = takenOn(id, names, p.plane, placements, certificates);
    if (taken !== undefined) return `on the ${PLANE_NAMES[p.plane]} plane, "${taken.other.name}" already answers ${taken.name}`;
  }
  return null;
}
