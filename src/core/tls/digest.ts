/**
 * The daily expiry digest (spec 1.2 rule 25): the certificates expiring within the horizon,
 * soonest first, then the expired ones, most recently expired first. A certificate in reserve
 * (placed on no plane) whose every name a longer-lived certificate carries is not named: it was
 * superseded, and listing it every day would bury the certificates that need a person.
 *
 * Pure: the caller passes every certificate that has a validity (pending signing requests have
 * none), the healthy ones included, since they are the ones that make a reserve one redundant.
 */
import { covers } from './names.ts';

export interface DigestCertificate {
  readonly id: string;
  readonly name: string;
  readonly names: readonly string[];
  /** End of validity, epoch seconds. */
  readonly notAfter: number;
  /** Planes it is placed on; empty means in reserve. */
  readonly planes: readonly string[];
}

export interface DigestEntry {
  readonly id: string;
  readonly name: string;
  readonly names: readonly string[];
  readonly planes: readonly string[];
  readonly notAfter: number;
  /** Whole days until expiry (expiring) or since expiry (expired); 0 is less than a day. */
  readonly days: number;
}

export interface Digest {
  /** Within the horizon, soonest first. */
  readonly expiring: DigestEntry[];
  /** Already expired, most recently expired first. */
  readonly expired: DigestEntry[];
  readonly subject: string;
  /** The mail body, plain text. */
  readonly text: string;
}

const DAY = 86_400;

/** The digest for `now` (epoch seconds), or null when no certificate needs to be named. */
export function buildDigest(certs: readonly DigestCertificate[], now: number, horizonDays: number): Digest | null {
  const horizon = now + horizonDays * DAY;
  const expiring: DigestEntry[] = [];
  const expired: DigestEntry[] = [];
  let superseded = 0;
  for (const cert of certs) {
    // X.509 validity includes notAfter itself.
    const isExpired = cert.notAfter < now;
    if (!isExpired && cert.notAfter > horizon) continue;
    if (supersededInReserve(cert, certs)) {
      superseded += 1;
      continue;
    }
    const days = Math.floor(Math.abs(cert.notAfter - now) / DAY);
    const entry: DigestEntry = { id: cert.id, name: cert.name, names: cert.names, planes: cert.planes, notAfter: cert.notAfter, days };
    (isExpired ? expired : expiring).push(entry);
  }
  if (expiring.length === 0 && expired.length === 0) return null;
  expiring.sort((a, b) => a.notAfter - b.notAfter || byName(a, b));
  expired.sort((a, b) => b.notAfter - a.notAfter || byName(a, b));
  return {
    expiring,
    expired,
    subject: subjectOf(expiring.length, expired.length, horizonDays),
    text: textOf(expiring, expired, superseded, horizonDays),
  };
}

function supersededInReserve(cert: DigestCertificate, all: readonly DigestCertificate[]): boolean {
  if (cert.planes.length > 0 || cert.names.length === 0) return false;
  const longer = all.filter((other) => other.id !== cert.id && other.notAfter > cert.notAfter);
  return cert.names.every((host) => longer.some((other) => covers(other.names, host)));
}

function byName(a: DigestEntry, b: DigestEntry): number {
  return a.name.localeCompare(b.name) || a.id.localeCompare(b.id);
}

function count(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`;
}

function subjectOf(expiring: number, expired: number, horizonDays: number): string {
  const parts: string[] = [];
  if (expiring > 0) {
    parts.push(`${count(expiring, 'certificate expires', 'certificates expire')} within ${count(horizonDays, 'day', 'days')}`);
  }
  if (expired > 0) parts.push(`${count(expired, 'certificate has', 'certificates have')} expired`);
  return `Meerkat: ${parts.join('; ')}`;
}

/** `2026-03-01 12:00 UTC`: one reading for every administrator, wherever they are. */
function dateOf(epochSeconds: number): string {
  const iso = new Date(epochSeconds * 1000).toISOString();
  return `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`;
}

function entryText(e: DigestEntry, expired: boolean): string {
  const when = expired
    ? (e.days === 0 ? 'expired less than a day ago' : `expired ${count(e.days, 'day', 'days')} ago`)
    : (e.days === 0 ? 'expires in less than a day' : `expires in ${count(e.days, 'day', 'days')}`);
  return [
    `- ${e.name}`,
    `  names: ${e.names.length > 0 ? e.names.join(', ') : '(none)'}`,
    `  ${e.planes.length > 0 ? `placed on: ${e.planes.join(', ')}` : 'in reserve (placed on no plane)'}`,
    `  ${when}, on ${dateOf(e.notAfter)}`,
  ].join('\n');
}

function textOf(expiring: DigestEntry[], expired: DigestEntry[], superseded: number, horizonDays: number): string {
  const blocks: string[] = [];
  if (expiring.length > 0) {
    blocks.push(`Certificates expiring within ${count(horizonDays, 'day', 'days')}, soonest first:`);
    blocks.push(...expiring.map((e) => entryText(e, false)));
  }
  if (expired.length > 0) {
    blocks.push('Certificates that have expired, most recently expired first:');
    blocks.push(...expired.map((e) => entryText(e, true)));
  }
  if (superseded > 0) {
    blocks.push(`${count(superseded, 'certificate in reserve is', 'certificates in reserve are')} not named: a longer-lived certificate carries ${superseded === 1 ? 'its' : 'their'} names.`);
  }
  blocks.push('Renew or replace them in the console.');
  return `${blocks.join('\n\n')}\n`;
}
