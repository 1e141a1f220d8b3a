import { covers, normaliseHost } from './names.ts';

/**
 * The handshake's choice of certificate (spec 1.2 rule 9), among the certificates placed on a
 * plane and used in its mode. Pure, so the doors' SNI callback and the console ("which one
 * answers this name?") decide alike.
 */

export interface Candidate {
  readonly id: string;
  readonly names: readonly string[];
  /** Epoch seconds. */
  readonly notAfter: number;
  /** Epoch seconds; a certificate further ahead of `now` than clocks disagree by is not valid yet. */
  readonly notBefore?: number;
  /** When it was placed on this plane, any monotonic unit (epoch ms in practice). */
  readonly placedAt: number;
}

export type Choice<T> =
  | { readonly kind: 'match'; readonly cert: T }
  | { readonly kind: 'fallback'; readonly cert: T }
  | { readonly kind: 'none'; readonly served: string[] };

/** How far ahead of the gateway's clock a certificate's start may be and still count as valid (clocks disagree). */
export const NOT_BEFORE_SKEW_S = 3600;

/** Valid at `now`: not expired, and not starting later than clocks disagree by. */
export function isLive(c: Pick<Candidate, 'notAfter' | 'notBefore'>, now: number): boolean {
  return c.notAfter > now && (c.notBefore === undefined || c.notBefore <= now + NOT_BEFORE_SKEW_S);
}

/** Oldest placed first; the id settles a tie so every node chooses the same. */
const byPlacement = (a: Candidate, b: Candidate): number =>
  a.placedAt - b.placedAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/**
 * Rules, exactly as the specification gives them:
 * - among the candidates carrying the name (exact, wildcard or address alike: no preference of
 *   an exact name over a wildcard, the specification makes none), the one valid longest wins;
 *   a certificate valid at `now` beats an expired one or one not valid yet (a renewal placed
 *   before its start must not take over); equal ends fall back to placement order;
 * - no server name, or one no candidate carries: the fallback, the oldest placed, expired or not;
 * - nothing placed: `none`, with what the plane serves, for the error sentence.
 * `serverName` is the SNI name (never a port); `now` is epoch seconds.
 */
export function chooseCertificate<T extends Candidate>(
  candidates: readonly T[],
  serverName: string | undefined,
  now: number,
): Choice<T> {
  if (candidates.length === 0) return { kind: 'none', served: servedNames(candidates) };
  const name = serverName === undefined ? '' : normaliseHost(serverName);
  if (name !== '') {
    const carrying = candidates.filter((c) => covers(c.names, name));
    const best = carrying.sort((a, b) => {
      const aLive = isLive(a, now) ? 1 : 0;
      const bLive = isLive(b, now) ? 1 : 0;
      return bLive - aLive || b.notAfter - a.notAfter || byPlacement(a, b);
    })[0];
    if (best !== undefined) return { kind: 'match', cert: best };
  }
  const oldest = [...candidates].sort(byPlacement)[0]!;
  return { kind: 'fallback', cert: oldest };
}

/** Every name the candidates carry, once each (case aside), in placement order. */
export function servedNames(candidates: readonly Candidate[]): string[] {
  const names = [...candidates].sort(byPlacement).flatMap((c) => c.names.map(normaliseHost));
  return [...new Set(names)];
}

const LISTED = 10;

/**
 * The sentence a refused handshake or a console notice gives for what a plane serves:
 * "no certificate is placed on this plane; it serves nothing over HTTPS", or
 * "this plane serves a.example.com, *.b.example.com" (the first ten, then how many more).
 */
export function describeServed(names: readonly string[]): string {
  const unique = [...new Set(names.map(normaliseHost))].filter((n) => n !== '');
  if (unique.length === 0) return 'no certificate is placed on this plane; it serves nothing over HTTPS';
  const shown = unique.slice(0, LISTED).join(', ');
  const more = unique.length > LISTED ? ` and ${unique.length - LISTED} more` : '';
  return `this plane serves ${shown}${more}`;
}
