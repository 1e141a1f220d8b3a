/** Rows of the certificate store as records, and the material a node can present. */
import type { EntityManager } from '@mikro-orm/core';
import { CertificateRow, PlacementRow } from '../../store/entities.ts';
import { unseal } from '../../core/vault/seal.ts';
import { GatewayError } from '../../http/errors.ts';
import { readFilePair } from './sources/file.ts';
import { TLS_PLANES, type CertRecord, type CertSource, type CertState, type Material, type Placement, type TlsPlane, type TlsSettings } from './messages.ts';
import { fitsMode } from './modes.ts';
import { isLive } from '../../core/tls/choose.ts';
import { stateAt } from './state.ts';
import { doorContext } from '../../http/door-context.ts';

export const keyContext = (id: string): string => `certificate/${id}`;

export interface Loaded {
  readonly rows: readonly CertificateRow[];
  readonly placements: readonly Placement[];
}

export async function loadRows(em: EntityManager): Promise<Loaded> {
  // One after the other: inside a transaction both run on its one connection.
  const rows = await em.find(CertificateRow, {}, { orderBy: { createdAt: 'asc', id: 'asc' } });
  const placed = await em.find(PlacementRow, {}, { orderBy: { placedAt: 'asc' } });
  return { rows, placements: placed.map((p) => ({ id: p.certificateId, plane: p.plane as TlsPlane, placedAt: p.placedAt })) };
}

/** Why a row's key cannot be had; `gone`: a file of its pair is not there at all. */
export interface KeyProblem {
  readonly problem: string;
  readonly state: CertState;
  readonly gone?: boolean;
}

/** The key of a row, unsealed (or read from its file), or the sentence saying why it cannot be. */
export function keyOf(row: CertificateRow, masterKey: Buffer): { key: string; cert: string } | KeyProblem {
  if (row.source === 'file') {
    try {
      const pair = readFilePair(row.certPath!, row.keyPath!);
      return { key: pair.keyPem, cert: pair.certPem };
    } catch (err) {
      const gone = err instanceof GatewayError && err.code === 'tls.file-unreadable' && /\(no such file\)/.test(err.detail);
      return { problem: (err as Error).message, state: 'missing', gone };
    }
  }
  if (!row.certPem || !row.keySealed) return { problem: 'no certificate yet', state: row.source === 'csr' ? 'pending' : 'requesting' };
  try {
    return { key: unseal(masterKey, keyContext(row.id), row.keySealed), cert: row.certPem };
  } catch {
    return { problem: 'the private key cannot be unsealed on this node: its vault master key differs from the node that sealed it (set the same GATEWAY_VAULT_KEY on every node)', state: 'unsealable' };
  }
}

/**
 * Whether a certificate completes a handshake a client trusts: material this node can open (its
 * files read, its key unsealed), within its validity. The safety rules of the plain ports and the
 * last certificate count these, not placements: an unissued order, an expired or not yet valid
 * certificate, or one this node cannot open serves nothing.
 */
export function presentable(row: CertificateRow, masterKey: Buffer, nowS: number): boolean {
  const valid = isLive({ notAfter: row.notAfter ?? Number.POSITIVE_INFINITY, ...(row.notBefore == null ? {} : { notBefore: row.notBefore }) }, nowS);
  if (!valid) return false;
  const opened = keyOf(row, masterKey);
  if ('problem' in opened) return false;
  // A pair read from files was judged by OpenSSL as it was read (sources/obtained.ts). A stored one
  // may predate that check, or a stricter OpenSSL may refuse it since: the doors leave it out
  // (view.ts), so it serves nothing.
  if (row.source === 'file') return true;
  try {
    doorContext(opened.cert, opened.key);
    return true;
  } catch {
    return false;
  }
}

/**
 * Counts the certificates of `placements` that serve HTTPS on a plane: presentable, and fitting
 * the plane's mode under `doors`. Each certificate is opened once however many placements,
 * planes and modes the caller weighs (before and after a change).
 */
export function servingCounter(rows: readonly CertificateRow[], masterKey: Buffer, nowS: number): (placements: readonly Placement[], doors: TlsSettings['doors'], plane: TlsPlane) => number {
  const byId = new Map(rows.map((r) => [r.id, r]));
  const opened = new Map<string, boolean>();
  const ok = (row: CertificateRow): boolean => {
    let yes = opened.get(row.id);
    if (yes === undefined) opened.set(row.id, (yes = presentable(row, masterKey, nowS)));
    return yes;
  };
  return (placements, doors, plane) => {
    let serving = 0;
    for (const p of placements) {
      if (p.plane !== plane) continue;
      const row = byId.get(p.id);
      if (row !== undefined && fitsMode(row.names, plane, doors) && ok(row)) serving++;
    }
    return serving;
  };
}

function stateOf(row: CertificateRow, keyProblem: KeyProblem | null, nowS: number): { state: CertState; detail: string | null } {
  if (row.source === 'csr' && !row.certPem) return { state: 'pending', detail: 'waiting for the authority\'s answer; download the request again at /api/certificates/' + row.id + '/csr' };
  if (row.status === 'requesting' || row.status === 'refused') return { state: row.status, detail: row.detail ?? null };
  if (keyProblem) return { state: keyProblem.state, detail: keyProblem.problem };
  return stateAt({ state: 'active', detail: row.detail ?? null, notBefore: row.notBefore ?? null, notAfter: row.notAfter ?? null }, nowS);
}

export interface Built {
  readonly records: CertRecord[];
  readonly material: Material[];
  /** File-system certificates served from their last pair read, their files disagreeing now. */
  readonly fromLastPair: ReadonlySet<string>;
}

/**
 * Records for the API and material for the doors. Keys are opened only for placed certificates:
 * a certificate in reserve is never held in clear in memory.
 *
 * A placed file-system pair is kept in `lastGood` (the actor's, from one publish to the next): a
 * runtime renewing it writes one file before the other, and while the two disagree the last pair
 * read goes on being presented, said in the detail. A pair whose files are gone is not served.
 * Nor is a new pair on disk before the 30-s read stored what it says: the doors choose a
 * certificate by the stored names, so until then the last pair read goes on being presented.
 * A new pair the read held back (`heldBack`: id to the placement rule it breaks) is not
 * presented either: the last pair read is, or nothing when this node has none.
 */
export function build(loaded: Loaded, settings: TlsSettings, masterKey: Buffer, nowMs: number, lastGood: Map<string, Material> = new Map(), heldBack: ReadonlyMap<string, string> = new Map()): Built {
  const placedOn = new Map<string, TlsPlane[]>();
  for (const p of loaded.placements) placedOn.set(p.id, [...(placedOn.get(p.id) ?? []), p.plane]);
  const records: CertRecord[] = [];
  const material: Material[] = [];
  const kept = new Set<string>();
  const fromLastPair = new Set<string>();
  for (const row of loaded.rows) {
    const planes = TLS_PLANES.filter((pl) => placedOn.get(row.id)?.includes(pl));
    let keyProblem: KeyProblem | null = null;
    let held: string | null = null;
    if (planes.length > 0 || row.source === 'file') {
      const opened = keyOf(row, masterKey);
      const last = row.source === 'file' && planes.length > 0 ? lastGood.get(row.id) : undefined;
      const renewed = !('problem' in opened) && row.certPem != null && opened.cert !== row.certPem;
      const rule = renewed && planes.length > 0 ? heldBack.get(row.id) : undefined;
      if (rule !== undefined) {
        const said = `the files on disk hold a renewal that breaks a placement rule (${rule})`;
        if (last !== undefined) {
          material.push(last);
          kept.add(row.id);
          held = `${said}; the last pair read is presented until the files or the placements change`;
        } else {
          keyProblem = { problem: `${said}; this node read no earlier pair, so it presents nothing until the files or the placements change`, state: 'refused' };
        }
      } else if (renewed && last !== undefined) {
        material.push(last);
        kept.add(row.id);
        held = 'the files on disk hold another certificate, presented once it is read (within 30 s); the last pair read is presented until then';
        fromLastPair.add(row.id);
      } else if (!('problem' in opened)) {
        if (planes.length > 0) {
          const m = { id: row.id, cert: opened.cert, key: opened.key };
          material.push(m);
          if (row.source === 'file') {
            lastGood.set(row.id, m);
            kept.add(row.id);
          }
        }
      } else if (last !== undefined && opened.gone !== true) {
        material.push(last);
        kept.add(row.id);
        held = `the files on disk make no pair now: ${opened.problem}; the last pair read is presented until they do`;
        fromLastPair.add(row.id);
      } else {
        keyProblem = opened;
      }
    }
    const { state, detail } = held !== null
      ? { state: 'active' as const, detail: held }
      : stateOf(row, keyProblem, Math.floor(nowMs / 1000));
    records.push({
      id: row.id, name: row.name, names: row.names, issuer: row.issuer ?? null,
      notBefore: row.notBefore ?? null, notAfter: row.notAfter ?? null, source: row.source as CertSource,
      planes, inactive: planes.filter((p) => !fitsMode(row.names, p, settings.doors)), state, detail, fingerprint: row.fingerprint ?? null,
      ...(row.source === 'file' ? { paths: { cert: row.certPath!, key: row.keyPath! } } : {}),
      createdAt: row.createdAt,
    });
  }
  for (const id of lastGood.keys()) if (!kept.has(id)) lastGood.delete(id);
  return { records, material, fromLastPair };
}
