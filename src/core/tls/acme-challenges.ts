/**
 * The ACME challenge answers in flight (RFC 8555 section 8.3, RFC 8737). The issuer adds an
 * answer before it tells the authority to validate and removes it once the authority has decided;
 * the doors only read:
 * - the data plane's plain door answers `GET /.well-known/acme-challenge/{token}` with
 *   `http01(token)` (as `text/plain`), and 404 when it gives nothing;
 * - the HTTPS doors present `alpn01(name)` to a handshake whose ALPN offers `acme-tls/1`, and
 *   end a handshake for a name it does not know (RFC 8737 section 3: such a handshake never
 *   gets an ordinary certificate).
 */

/** The ALPN protocol of the TLS-ALPN-01 challenge. */
export const ACME_TLS_ALPN = 'acme-tls/1';

/** Where an authority looks for an HTTP-01 answer. */
export const HTTP01_PREFIX = '/.well-known/acme-challenge/';

/** The self-signed certificate (PEM) and its key that answer a TLS-ALPN-01 challenge. */
export interface AlpnAnswer {
  readonly cert: string;
  readonly key: string;
}

/**
 * Where an issuer posts its answers. `AcmeChallenges` is one; an issuer running in a worker
 * passes one that forwards to the main thread's board, so each method may be awaited and the
 * authority is told to validate only once the answer can be served.
 */
export interface ChallengeBoard {
  addHttp01(token: string, keyAuthorization: string): void | Promise<void>;
  removeHttp01(token: string): void | Promise<void>;
  addAlpn01(name: string, answer: AlpnAnswer): void | Promise<void>;
  removeAlpn01(name: string, answer: AlpnAnswer): void | Promise<void>;
}

// base64url, as RFC 8555 section 8.1 defines a token; anything else is no token of ours.
const TOKEN = /^[A-Za-z0-9_-]{1,256}$/;

/** The token of a request path of the HTTP-01 challenge, or undefined for any other path. */
export function http01Token(path: string): string | undefined {
  if (!path.startsWith(HTTP01_PREFIX)) return undefined;
  const token = path.slice(HTTP01_PREFIX.length);
  return TOKEN.test(token) ? token : undefined;
}

export class AcmeChallenges implements ChallengeBoard {
  readonly #http = new Map<string, string>();
  readonly #alpn = new Map<string, AlpnAnswer>();

  /** The key authorization to answer for this token, if an issuance waits on it. */
  http01(token: string): string | undefined {
    return this.#http.get(token);
  }

  /** The acme-tls/1 certificate for this name, if an issuance waits on it. */
  alpn01(name: string): AlpnAnswer | undefined {
    return this.#alpn.get(name.toLowerCase());
  }

  addHttp01(token: string, keyAuthorization: string): void {
    this.#http.set(token, keyAuthorization);
  }

  removeHttp01(token: string): void {
    this.#http.delete(token);
  }

  addAlpn01(name: string, answer: AlpnAnswer): void {
    this.#alpn.set(name.toLowerCase(), answer);
  }

  /** Removes the answer only if it is still this one: a later issuance for the name keeps its own. */
  removeAlpn01(name: string, answer: AlpnAnswer): void {
    const key = name.toLowerCase();
    if (this.#alpn.get(key) === answer) this.#alpn.delete(key);
  }

  /** Takes every answer down (the issuer that posted them is gone). */
  clear(): void {
    this.#http.clear();
    this.#alpn.clear();
  }

  /** How many answers wait (for a status line and for tests). */
  get size(): number {
    return this.#http.size + this.#alpn.size;
  }
}
