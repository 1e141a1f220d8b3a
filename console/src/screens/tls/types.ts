/** The answers of the TLS APIs as the screen reads them (docs/tls.md, docs/tls-acme.md). */

export type Plane = 'console' | 'app' | 'internal';
export const PLANES: readonly Plane[] = ['console', 'app', 'internal'];
export const PLANE_LABEL: Record<Plane, string> = { console: 'Console', app: 'Application', internal: 'Internal' };

export type CertState = 'active' | 'pending' | 'expired' | 'not-yet-valid' | 'unsealable' | 'requesting' | 'refused' | 'missing';

export interface Certificate {
  readonly id: string;
  readonly name: string;
  readonly names: readonly string[];
  readonly issuer: string | null;
  readonly notBefore: number | null;
  readonly notAfter: number | null;
  /** Seconds until it expires, on the gateway's clock at the time of the answer. */
  readonly expiresIn: number | null;
  readonly source: 'import' | 'file' | 'self-signed' | 'csr' | 'acme';
  readonly planes: readonly Plane[];
  readonly inactive: readonly Plane[];
  readonly state: CertState;
  readonly detail: string | null;
  readonly fingerprint: string | null;
  readonly paths?: { readonly cert: string; readonly key: string };
  readonly createdAt: number;
}

export interface DoorAddress {
  /** host:port the gateway bound, or null while the door is closed. */
  readonly address: string | null;
  /** The port the world reaches (GATEWAY_PUBLIC_PORTS), or null when the runtime does not say. */
  readonly publicPort: number | null;
}

export interface Door {
  readonly proxied: boolean;
  readonly names: readonly string[];
  readonly proxyAddresses: readonly string[];
  readonly runtimeNames: readonly string[];
  readonly internalNames: ReadonlyArray<{ readonly name: string; readonly covered: boolean }>;
  readonly uncovered: readonly string[];
  readonly http: DoorAddress;
  readonly https: DoorAddress;
}

export interface TlsSettings {
  readonly closed: Record<Plane, readonly string[]>;
  readonly consoleTraffic: ReadonlyArray<{ readonly door: 'http' | 'https'; readonly peer: string | null; readonly lastSeen: number | null }>;
  readonly trafficWindow: number;
  readonly redirect: { readonly forceHttps: boolean; readonly hstsMaxAge: number };
  readonly doors: Record<Plane, Door>;
}

export interface TrustedAuthority {
  readonly id: string;
  readonly name: string;
  readonly subjects: readonly string[];
  readonly notAfter: number;
  readonly fingerprint: string;
  readonly count: number;
}

export interface AcmeAuthority {
  readonly id: string;
  readonly name: string;
  readonly directory: string;
  readonly rootCa: string | null;
  readonly email: string | null;
  readonly eab: { readonly kid: string; readonly hmacKey: string } | null;
  readonly termsAccepted: boolean;
  readonly challenge: 'http-01' | 'tls-alpn-01';
  readonly accountUrl: string | null;
  readonly orders: number;
  readonly armed: boolean;
}

/** ACME as this node offers it: the authorities, or the API's sentence saying why not (community edition). */
export type Acme = { readonly authorities: readonly AcmeAuthority[] } | { readonly refused: string };

export interface MountCandidate {
  readonly mount: string;
  readonly certPath: string;
  readonly keyPath: string | null;
  readonly names: readonly string[];
  readonly notAfter: number;
  readonly pickable: boolean;
}

/** The port of a bound address ("127.0.0.1:9443", "[::]:9443"). */
export function portOf(address: string | null): number | null {
  const m = address?.match(/:(\d+)$/);
  return m ? Number(m[1]) : null;
}

/** Names typed one per line or separated by commas or spaces. */
export function splitNames(text: string): string[] {
  return text.split(/[\s,]+/).map((s) => s.trim()).filter((s) => s !== '');
}

/**
 * An https address on this page's own origin changed to `host` and `port` (443 left out).
 * Built from the page's address, so the bundle names no address of its own.
 */
export function httpsUrl(host: string, port: number | null, path = '/'): string {
  const url = new URL(path, location.href);
  url.protocol = 'https:';
  url.hostname = host;
  url.port = port === null || port === 443 ? '' : String(port);
  url.search = '';
  url.hash = '';
  return url.href;
}
