/**
 * The main thread's view of the certificate store: what each plane presents, a TLS context per
 * certificate (built once per material, reused by every handshake), and the handshake choice of
 * spec 1.2 rule 9. A new snapshot replaces every structure at once; a handshake in progress
 * finishes on the old ones, and open connections keep the context they were given.
 */
import type { DoorSettings } from '../../core/tls/door-names.ts';
import type { SecureContext } from 'node:tls';
import { doorContext } from '../../http/door-context.ts';
import { chooseCertificate, describeServed, isLive, type Candidate } from '../../core/tls/choose.ts';
import { covers } from '../../core/tls/names.ts';
import { ProxyTrust } from '../../http/trusted-proxies.ts';
import { HSTS_DEFAULT, NO_DOOR, TLS_PLANES, type DoorPlane, type CertRecord, type Material, type TlsPlane, type TlsSettings, type TlsSnapshot } from './messages.ts';

interface Served {
  readonly id: string;
  readonly names: readonly string[];
  readonly notAfter: number;
  readonly notBefore?: number;
  readonly placedAt: number;
  readonly material: Material;
}

export class TlsView {
  records = new Map<string, CertRecord>();
  settings: TlsSettings = { httpOff: [], redirect: { forceHttps: false, hstsMaxAge: HSTS_DEFAULT }, doors: { console: NO_DOOR, app: NO_DOOR } };
  #served = new Map<TlsPlane, Served[]>(TLS_PLANES.map((p) => [p, []]));
  #contexts = new Map<string, { readonly material: Material; readonly context: SecureContext }>();
  readonly #listeners: Array<() => void> = [];
  /** `https://<first application name>` once names are declared (spec 1.2 rule 13), else undefined. */
  issuer: string | undefined;
  #trust: Readonly<Record<DoorPlane, ProxyTrust | null>> = { console: null, app: null };
  /** Material OpenSSL refused, by certificate id: told once per material, never presented. */
  #refused = new Map<string, Material>();

  /** @param onRefused told when OpenSSL will not load a certificate's material (the operational log). */
  constructor(private readonly onRefused: (id: string, reason: string) => void = () => undefined) {}

  apply(s: TlsSnapshot): void {
    // Contexts are kept while their material is the same, so a swap builds only what changed. One
    // certificate OpenSSL will not load (a digest it refuses) is left out alone: the others, on
    // every plane, still follow each snapshot.
    const contexts = new Map<string, { material: Material; context: SecureContext }>();
    const refused = new Map<string, Material>();
    for (const m of s.material) {
      const kept = this.#contexts.get(m.id);
      if (kept && kept.material.cert === m.cert && kept.material.key === m.key) {
        contexts.set(m.id, kept);
        continue;
      }
      try {
        contexts.set(m.id, { material: m, context: doorContext(m.cert, m.key) });
      } catch (err) {
        refused.set(m.id, m);
        const before = this.#refused.get(m.id);
        if (before?.cert !== m.cert || before.key !== m.key) this.onRefused(m.id, (err as Error).message);
      }
    }
    const material = new Map(s.material.map((m) => [m.id, m]));
    const records = new Map(s.certificates.map((c) => [c.id, c]));
    const served = new Map<TlsPlane, Served[]>(TLS_PLANES.map((p) => [p, []]));
    for (const p of s.placements) {
      const m = material.get(p.id);
      const r = records.get(p.id);
      if (!m || !r || r.inactive.includes(p.plane) || !contexts.has(p.id)) continue;
      served.get(p.plane)!.push({ id: p.id, names: r.names, notAfter: r.notAfter ?? 0, ...(r.notBefore == null ? {} : { notBefore: r.notBefore }), placedAt: p.placedAt, material: m });
    }
    this.#refused = refused;
    this.records = records;
    this.settings = s.settings;
    const first = s.settings.doors.app.names[0];
    this.issuer = first === undefined ? undefined : `https://${first}`;
    // Forwarded headers are believed only behind a declared proxy, and only from its addresses.
    const trust = (d: DoorSettings) => (d.proxied ? new ProxyTrust(d.proxyAddresses) : null);
    this.#trust = { console: trust(s.settings.doors.console), app: trust(s.settings.doors.app) };
    this.#served = served;
    this.#contexts = contexts;
    for (const fn of this.#listeners) fn();
  }

  onChange(fn: () => void): void {
    this.#listeners.push(fn);
  }

  /** Whom a plane believes forwarded headers from; null: nobody (spec 1.2 rules 15-16). */
  trust(plane: DoorPlane): ProxyTrust | null {
    return this.#trust[plane];
  }

  /** Certificates a plane presents now (placed, active in its mode, key at hand). */
  served(plane: TlsPlane): readonly Candidate[] {
    return this.#served.get(plane)!;
  }

  /**
   * The context for a handshake asking `serverName` (rule 9; none or a name nobody carries: the
   * oldest placed); an Error names what is served.
   */
  contextFor(plane: TlsPlane, serverName: string | undefined, nowMs: number): SecureContext | Error {
    const choice = chooseCertificate(this.#served.get(plane)!, serverName, Math.floor(nowMs / 1000));
    if (choice.kind === 'none') return new Error(describeServed(choice.served));
    return this.#contexts.get(choice.cert.id)!.context;
  }

  /**
   * A certificate placed on `plane` carries `host` and is still valid: the redirect and HSTS
   * apply to that name (rules 11-12), and retreat once every such certificate has expired.
   */
  carriesValid(plane: TlsPlane, host: string, nowMs: number): boolean {
    const now = Math.floor(nowMs / 1000);
    return this.#served.get(plane)!.some((c) => isLive(c, now) && covers(c.names, host));
  }
}
