/**
 * How the caller's identity reaches the upstream: plain headers, REMOTE_USER, or a short-lived
 * ES256 JWT the upstream verifies against the gateway's JWKS. Signing costs far more than a
 * request may spend, so tokens are reused while they have comfortably long to live.
 */
import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import type { Identity, IdentityMode } from '../core/model.ts';
import { SIGNED_IDENTITY } from '../http/gateway-headers.ts';

/** Headers only the gateway may set: stripped from what callers send (see forward-headers.ts). */
export { IDENTITY_HEADERS } from '../http/gateway-headers.ts';

export interface SigningKey {
  readonly kid: string;
  readonly privateKeyPem: string;
}

const TOKEN_LIFETIME_S = 60;
/** A token is handed out only with this much life left, so it cannot expire in flight. */
const MIN_REMAINING_MS = 30_000;
/** Past this many cached users, stale tokens are swept (and the cache cleared if that is not enough). */
const CACHE_LIMIT = 10_000;

/** New P-256 key; kid = RFC 7638 JWK thumbprint (base64url SHA-256). */
export function generateSigningKey(): SigningKey {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const jwk = publicKey.export({ format: 'jwk' });
  return {
    kid: thumbprint(jwk.crv!, jwk.x!, jwk.y!),
    privateKeyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
  };
}

/** RFC 7638: SHA-256 over the required members in lexicographic order, no whitespace. */
function thumbprint(crv: string, x: string, y: string): string {
  const canonical = `{"crv":${JSON.stringify(crv)},"kty":"EC","x":${JSON.stringify(x)},"y":${JSON.stringify(y)}}`;
  return createHash('sha256').update(canonical).digest('base64url');
}

interface Cached {
  readonly roles: readonly string[];
  readonly org: string | null;
  readonly aud: string;
  token: string;
  iatMs: number;
  expMs: number;
}

/** A user rarely holds more than a few (roles, organisation, route) combinations at a time. */
const PER_USER_LIMIT = 16;

export class IdentitySigner {
  readonly #key: KeyObject;
  /** base64url of the JOSE header plus the '.', fixed for the signing key. */
  readonly #headerPart: string;
  readonly #jwks: { readonly keys: readonly Record<string, string>[] };
  /**
   * issuer → user → tokens. Nested maps keyed by strings the caller already holds: building one
   * composite key string per request would cost more (hashing a fresh string) than the lookups.
   */
  readonly #cache = new Map<string, Map<string, Cached[]>>();
  #users = 0;

  /** First key signs; all are published, so tokens signed by a key being retired still verify. */
  constructor(keys: readonly SigningKey[]) {
    const first = keys[0];
    if (first === undefined) throw new Error('IdentitySigner needs at least one signing key');
    this.#key = createPrivateKey(first.privateKeyPem);
    const header = JSON.stringify({ alg: 'ES256', typ: 'JWT', kid: first.kid });
    this.#headerPart = `${Buffer.from(header).toString('base64url')}.`;
    const published = keys.map((k) => {
      const jwk = createPublicKey(createPrivateKey(k.privateKeyPem)).export({ format: 'jwk' });
      if (jwk.kty !== 'EC' || jwk.crv !== 'P-256') throw new Error(`signing key ${k.kid} is not a P-256 key`);
      return Object.freeze({ kty: 'EC', crv: 'P-256', x: jwk.x!, y: jwk.y!, kid: k.kid, alg: 'ES256', use: 'sig' });
    });
    this.#jwks = Object.freeze({ keys: Object.freeze(published) });
  }

  /**
   * ES256 compact JWT (header {alg:'ES256',typ:'JWT',kid}), claims {iss, aud, sub, roles, org
   * (only when not null), iat, exp: iat+60} in seconds. `aud` is the route's id: a service that
   * checks it refuses a token the gateway made for another route's service, which could otherwise
   * replay it there for its minute. Reused while at least 30 s of validity remain.
   */
  sign(identity: Identity, issuer: string, audience: string, nowMs: number): string {
    let users = this.#cache.get(issuer);
    if (users === undefined) this.#cache.set(issuer, (users = new Map()));
    let entries = users.get(identity.user);
    const org = identity.organisation;
    let entry: Cached | undefined;
    if (entries !== undefined) {
      for (const e of entries) if (e.aud === audience && e.org === org && sameRoles(e.roles, identity.roles)) entry = e;
    }
    // A clock stepped backwards must not hand out a token issued in its future.
    if (entry !== undefined && entry.expMs - nowMs >= MIN_REMAINING_MS && nowMs >= entry.iatMs) return entry.token;
    const iat = Math.floor(nowMs / 1000);
    const token = this.#signed(identity, issuer, audience, iat);
    if (entry !== undefined) {
      entry.token = token;
      entry.iatMs = iat * 1000;
      entry.expMs = (iat + TOKEN_LIFETIME_S) * 1000;
      return token;
    }
    if (entries === undefined) {
      if (this.#users >= CACHE_LIMIT) {
        this.#sweep(nowMs);
        // The sweep may have dropped this issuer's map.
        users = this.#cache.get(issuer) ?? new Map<string, Cached[]>();
        this.#cache.set(issuer, users);
      }
      users.set(identity.user, (entries = []));
      this.#users++;
    } else if (entries.length >= PER_USER_LIMIT) {
      entries.shift();
    }
    // Copied: the cache must not follow a caller that later mutates its array.
    entries.push({ roles: [...identity.roles], org, aud: audience, token, iatMs: iat * 1000, expMs: (iat + TOKEN_LIFETIME_S) * 1000 });
    return token;
  }

  #signed(identity: Identity, issuer: string, aud: string, iat: number): string {
    const org = identity.organisation;
    const exp = iat + TOKEN_LIFETIME_S;
    const claims = org === null
      ? { iss: issuer, aud, sub: identity.user, roles: identity.roles, iat, exp }
      : { iss: issuer, aud, sub: identity.user, roles: identity.roles, org, iat, exp };
    const signingInput = this.#headerPart + Buffer.from(JSON.stringify(claims)).toString('base64url');
    const signature = sign('sha256', Buffer.from(signingInput), { key: this.#key, dsaEncoding: 'ieee-p1363' });
    return `${signingInput}.${signature.toString('base64url')}`;
  }

  /** { keys: [ { kty, crv, x, y, kid, alg: 'ES256', use: 'sig' } ] }: public parts only, computed once. */
  jwks(): { readonly keys: readonly Record<string, string>[] } {
    return this.#jwks;
  }

  #sweep(nowMs: number): void {
    let users = 0;
    for (const [issuer, byUser] of this.#cache) {
      for (const [user, entries] of byUser) {
        const fresh = entries.filter((e) => e.expMs - nowMs >= MIN_REMAINING_MS);
        if (fresh.length === 0) byUser.delete(user);
        else byUser.set(user, fresh);
      }
      if (byUser.size === 0) this.#cache.delete(issuer);
      users += byUser.size;
    }
    this.#users = users;
    if (users >= CACHE_LIMIT) {
      this.#cache.clear();
      this.#users = 0;
    }
  }
}

function sameRoles(a: readonly string[], b: readonly string[]): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/**
 * The header value of a role list. Expanded role lists are the role graph's own frozen arrays,
 * the same array for every request of the same callers, so each is joined once; a list that could
 * still change is joined each time.
 */
const joinedRoles = new WeakMap<readonly string[], string>();
function rolesValue(roles: readonly string[]): string {
  if (!Object.isFrozen(roles)) return roles.join(',');
  let joined = joinedRoles.get(roles);
  if (joined === undefined) joinedRoles.set(roles, (joined = roles.join(',')));
  return joined;
}

/**
 * Adds the headers of a mode to `out` (the headers going upstream, written in place rather than
 * merged from another object on every request): headers → x-gateway-user, x-gateway-roles
 * (comma-joined, no spaces), x-gateway-organisation (only when not null); remote-user →
 * remote-user; jwt → x-gateway-identity.
 */
export function addIdentityHeaders(out: Record<string, string>, mode: IdentityMode, identity: Identity, signer: IdentitySigner, issuer: string, route: string, nowMs: number): void {
  switch (mode) {
    case 'headers':
      out['x-gateway-user'] = identity.user;
      out['x-gateway-roles'] = rolesValue(identity.roles);
      if (identity.organisation !== null) out['x-gateway-organisation'] = identity.organisation;
      return;
    case 'remote-user':
      out['remote-user'] = identity.user;
      return;
    case 'jwt':
      out[SIGNED_IDENTITY] = signer.sign(identity, issuer, route, nowMs);
  }
}
