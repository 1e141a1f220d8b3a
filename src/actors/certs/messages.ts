/**
 * CertActor's protocol. The actor owns the certificate store (spec 1.2, 2.5): certificates held
 * once, their placements on planes, the TLS settings (plain ports, redirect) and the console
 * traffic window pooled over nodes. It unseals the keys of placed certificates and pushes them
 * to the main thread, whose HTTPS doors choose among them at each handshake; nothing else ever
 * sees key material (not an answer, an export, a log or an audit line).
 */
import type { StoreOptions } from '../../store/orm.ts';
import type { AuditRow } from '../../store/audit.ts';
import type { DoorSettings } from '../../core/tls/door-names.ts';
import type { AlpnAnswer } from '../../core/tls/acme-challenges.ts';
import type { AcmeAuthorityInput, AcmeChallengeType } from '../../core/tls/acme-authority.ts';

export type { AcmeAuthorityInput, AcmeChallengeType };

/** The planes as the TLS API names them: console = control, app = data. */
export type TlsPlane = 'console' | 'app' | 'internal';
export const TLS_PLANES: readonly TlsPlane[] = ['console', 'app', 'internal'];
/** How sentences name each plane. */
export const PLANE_NAMES: Readonly<Record<TlsPlane, string>> = { console: 'console', app: 'application', internal: 'internal' };

export type CertSource = 'import' | 'file' | 'self-signed' | 'csr' | 'acme';
export type CertState = 'active' | 'pending' | 'expired' | 'not-yet-valid' | 'unsealable' | 'requesting' | 'refused' | 'missing';

/** A certificate as the API answers it (CONTRACT.md "TLS"), less `expiresIn`, which is relative to now. */
export interface CertRecord {
  readonly id: string;
  readonly name: string;
  readonly names: readonly string[];
  readonly issuer: string | null;
  /** Epoch seconds; null while a signing request waits for its answer. */
  readonly notBefore: number | null;
  readonly notAfter: number | null;
  readonly source: CertSource;
  /** Planes it is placed on, in TLS_PLANES order. */
  readonly planes: readonly TlsPlane[];
  /** Planes where it is placed but does not fit the plane's mode. */
  readonly inactive: readonly TlsPlane[];
  readonly state: CertState;
  readonly detail: string | null;
  readonly fingerprint: string | null;
  /** File source only: where the certificate and its key are read. */
  readonly paths?: { readonly cert: string; readonly key: string };
  readonly createdAt: number;
}

export interface Placement {
  readonly id: string;
  readonly plane: TlsPlane;
  /** Epoch ms: the oldest placed is a plane's fallback (spec 1.2 rule 9). */
  readonly placedAt: number;
}

/** What a door presents for a certificate: unsealed, for the main thread's TLS contexts only. */
export interface Material {
  readonly id: string;
  /** Leaf and chain, PEM. */
  readonly cert: string;
  readonly key: string;
}

export interface RedirectSettings {
  readonly forceHttps: boolean;
  /** Seconds; a day by default, two years at most (spec 1.2 rule 12). */
  readonly hstsMaxAge: number;
}

export type DoorPlane = 'console' | 'app';
export const NO_DOOR: DoorSettings = Object.freeze({ proxied: false, names: Object.freeze([]), proxyAddresses: Object.freeze([]) });

export interface TlsSettings {
  /** Planes whose plain port is switched off (listening on 127.0.0.1 only). */
  readonly httpOff: readonly TlsPlane[];
  readonly redirect: RedirectSettings;
  readonly doors: Readonly<Record<DoorPlane, DoorSettings>>;
}

export interface TlsSnapshot {
  readonly certificates: readonly CertRecord[];
  readonly placements: readonly Placement[];
  /** For placed certificates whose key this node could open. */
  readonly material: readonly Material[];
  readonly settings: TlsSettings;
}

export interface ConsoleTraffic {
  readonly door: 'http' | 'https';
  readonly peer: string;
  /** Epoch ms. */
  readonly lastSeen: number;
  readonly node: string;
}

/** A console call seen by this node's doors (probes excluded), debounced per door. */
export interface TrafficSeen {
  readonly door: 'http' | 'https';
  readonly peer: string;
  readonly at: number;
}

export type NewCertificate =
  | { readonly source: 'import'; readonly name?: string; readonly cert: string; readonly key: string }
  | { readonly source: 'file'; readonly name?: string; readonly certPath: string; readonly keyPath: string }
  | { readonly source: 'self-signed'; readonly name?: string; readonly names: readonly string[]; readonly days?: number }
  | { readonly source: 'csr'; readonly name?: string; readonly names: readonly string[]; readonly subject?: Readonly<Record<string, string>> }
  /** An order, named `Ask <authority>`: asked of the authority (id or name) once placed (licensed). */
  | { readonly source: 'acme'; readonly authority: string; readonly names: readonly string[] };

/** How the request that asks a TLS change reached the console, for the safety rules of 1.2 rule 7. */
export interface Via {
  readonly plane: TlsPlane;
  readonly door: 'http' | 'https';
}

export type CertEvent =
  | { readonly type: 'snapshot'; readonly snapshot: TlsSnapshot }
  | { readonly type: 'audit.written'; readonly rows: readonly AuditRow[] }
  /** An ACME answer posted or taken down: the main thread's doors serve it (`AcmeChallenges`). */
  | { readonly type: 'acme.challenge'; readonly change: ChallengeChange };

/** What the issuer in the worker does to the main thread's challenge board. */
export type ChallengeChange =
  | { readonly op: 'add-http01'; readonly token: string; readonly keyAuthorization: string }
  | { readonly op: 'remove-http01'; readonly token: string }
  | { readonly op: 'add-alpn01'; readonly name: string; readonly answer: AlpnAnswer }
  | { readonly op: 'remove-alpn01'; readonly name: string; readonly answer: AlpnAnswer }
  /** A new worker has no issuance in flight: whatever an earlier one left posted goes. */
  | { readonly op: 'clear' };

/** An ACME authority as the API answers it: never an HMAC key or an account key. */
export interface AcmeAuthorityRecord {
  readonly id: string;
  readonly name: string;
  readonly directory: string;
  readonly rootCa: string | null;
  readonly email: string | null;
  /** `hmacKey` is the `$name` vault reference as written, or `sealed` for a literal kept sealed. */
  readonly eab: { readonly kid: string; readonly hmacKey: string } | null;
  readonly termsAccepted: boolean;
  readonly challenge: AcmeChallengeType;
  /** The account the authority gave at the first order; null until then (or after a new directory). */
  readonly accountUrl: string | null;
  /** Orders (certificates) asking this authority, and whether one is placed (the authority is armed). */
  readonly orders: number;
  readonly armed: boolean;
  readonly createdAt: number;
  readonly updatedAt: number;
}


export type CertCalls = {
  'cert.create': { args: NewCertificate; result: CertRecord };
  'cert.delete': { args: { id: string; via: Via | null }; result: boolean };
  'cert.place': { args: { id: string; planes: readonly TlsPlane[]; replace: boolean; via: Via | null }; result: CertRecord | null };
  /** The pending request's CSR (PEM), to download again; null: no such pending request. */
  'cert.csr': { args: { id: string }; result: string | null };
  /** Adopts the authority's answer to a pending request; refused unless it matches the key. */
  'cert.answer': { args: { id: string; cert: string }; result: CertRecord | null };
  'tls.ports': { args: { plane: TlsPlane; http: boolean; via: Via | null }; result: TlsSettings };
  /** hstsMaxAge left out keeps the duration set. */
  'tls.redirect': { args: { forceHttps: boolean; hstsMaxAge?: number }; result: TlsSettings };
  'tls.door': { args: { plane: DoorPlane; door: DoorSettings; via?: Via | null }; result: TlsSettings };
  'tls.traffic': { args: null; result: ConsoleTraffic[] };
  /** Creates (id null) or replaces an authority; null: no authority has this id. */
  'acme.authority.put': { args: { id: string | null; authority: AcmeAuthorityInput }; result: AcmeAuthorityRecord | null };
  'acme.authority.list': { args: null; result: AcmeAuthorityRecord[] };
  /** Refused while orders ask it (`acme.authority-in-use`); false: no such authority. */
  'acme.authority.delete': { args: { id: string }; result: boolean };
};

export type CertTells = {
  'tls.traffic': TrafficSeen;
};

export interface CertInit {
  readonly store: StoreOptions;
  readonly masterKey: string;
  readonly node: string;
  /** The data directory: never read as a file-system certificate. */
  readonly dataDir: string;
  /** Names the services call the internal plane by (GATEWAY_INTERNAL_NAMES). */
  readonly internalNames: readonly string[];
  /** How often to look for changes written by other nodes (the change bus is the fast path). */
  readonly pollMs: number;
  /** Where the daily expiry digest goes; null: one operational log line. */
  readonly mail: { readonly url: string; readonly from: string; readonly to: readonly string[] } | null;
  readonly digestHorizonDays: number;
  /** ACME issuance runs on the licensed edition only; on community, orders are kept, never asked. */
  readonly licensed: boolean;
}

/** The console traffic window (spec 1.2 rule 7, section 8). */
export const TRAFFIC_WINDOW_MS = 30_000;
/** File-system certificates are read again this often (spec 1.2 rule 20, section 8). */
export const FILE_REREAD_MS = 30_000;
/** HSTS duration: one day by default, two years at most (spec 1.2 rule 12, section 8). */
export const HSTS_DEFAULT = 86_400;
export const HSTS_MAX = 63_072_000;
/** An ACME certificate is renewed once less than this part of its lifetime remains. */
export const ACME_RENEW_FRACTION = 1 / 3;
/** How often placed orders are looked at for a certificate to ask or renew (on the clock). */
export const ACME_CHECK_MS = 3600_000;
