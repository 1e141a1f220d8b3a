/** The certificate calls of the CertActor: create, delete, place, the signing request's answer. */
import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/core';
import { CertificateRow, PlacementRow } from '../../store/entities.ts';
import { seal, unseal } from '../../core/vault/seal.ts';
import { GatewayError, invalidField } from '../../http/errors.ts';
import { write, type WriteDeps } from '../write.ts';
import type { ActorHandlers } from '../../workers/actor-runtime.ts';
import { PLANE_NAMES, TLS_PLANES, type CertCalls, type CertRecord, type NewCertificate, type Placement, type TlsPlane, type Via } from './messages.ts';
import { keyContext, loadRows, servingCounter } from './records.ts';
import { readTlsSettings, readTraffic } from './tls-settings.ts';
import { checkLeaving } from './safety.ts';
import { internalNameProblem, takenOn } from './placement-rules.ts';
import { fromImport } from './sources/import.ts';
import { checkFilePaths, readFilePair } from './sources/file.ts';
import type { Obtained } from './sources/obtained.ts';
import { createOrder, placeOrder } from './acme-orders.ts';
import type { CertDeps } from './deps.ts';

// node-forge and acme-client take a second or more to load on a busy machine: loaded on first use,
// so the actor (and the gateway) start without them.
const selfSigning = () => import('./sources/self-signed.ts');
const signingRequests = () => import('./sources/csr.ts');


type CertificateCalls = Pick<CertCalls, 'cert.create' | 'cert.delete' | 'cert.place' | 'cert.csr' | 'cert.answer'>;

/** What the trail keeps of a certificate: what it is, never its key. */
function audited(row: Pick<CertificateRow, 'name' | 'names' | 'source' | 'fingerprint' | 'notAfter'>, planes?: readonly string[]): Record<string, unknown> {
  return { name: row.name, names: row.names, source: row.source, fingerprint: row.fingerprint ?? null, notAfter: row.notAfter ?? null, ...(planes ? { planes } : {}) };
}

function nameOf(input: { name?: unknown }, fallback: string): string {
  if (input.name === undefined) return fallback.slice(0, 200);
  if (typeof input.name !== 'string' || input.name.trim() === '' || input.name.length > 200) throw invalidField('name', 'name is a label of 1 to 200 characters.');
  return input.name.trim();
}

function material(o: Obtained): Pick<CertificateRow, 'names' | 'issuer' | 'notBefore' | 'notAfter' | 'fingerprint'> {
  return { names: [...o.names], issuer: o.issuer, notBefore: o.notBefore, notAfter: o.notAfter, fingerprint: o.fingerprint };
}

function checkPlanes(planes: unknown): TlsPlane[] {
  if (!Array.isArray(planes) || !planes.every((p) => TLS_PLANES.includes(p as TlsPlane))) {
    throw invalidField('planes', 'planes is a list of console, app and internal (empty: placed nowhere, kept in reserve).');
  }
  return TLS_PLANES.filter((p) => planes.includes(p));
}

export function certificateHandlers(deps: CertDeps): ActorHandlers<CertificateCalls> {
  const create = async (input: NewCertificate): Promise<CertRecord> => {
    const id = randomUUID();
    const now = deps.now();
    let row: Omit<CertificateRow, 'id' | 'createdAt' | 'updatedAt'>;
    let key: string | null = null;
    switch (input.source) {
      case 'import':
      case 'self-signed': {
        const o = input.source === 'import' ? fromImport(input.cert, input.key) : (await selfSigning()).fromSelfSigned(input.names, input.days, now);
        key = o.keyPem;
        row = { name: nameOf(input, o.names[0] ?? 'certificate'), source: input.source, ...material(o), certPem: o.certPem, keySealed: null, csrPem: null, certPath: null, keyPath: null, authority: null, status: null, detail: null };
        break;
      }
      case 'csr': {
        const pending = await (await signingRequests()).requestSigning(input.names, input.subject);
        key = pending.keyPem;
        row = { name: nameOf(input, pending.names[0] ?? 'request'), source: 'csr', names: [...pending.names], issuer: null, notBefore: null, notAfter: null, fingerprint: null, certPem: null, keySealed: null, csrPem: pending.csrPem, certPath: null, keyPath: null, authority: null, status: null, detail: null };
        break;
      }
      case 'file': {
        const paths = checkFilePaths(input.certPath, input.keyPath, deps.dataDir);
        const o = readFilePair(paths.certPath, paths.keyPath);
        // Only the paths and the last certificate read are kept: the key stays on its file.
        row = { name: nameOf(input, o.names[0] ?? 'file'), source: 'file', ...material(o), certPem: o.certPem, keySealed: null, csrPem: null, certPath: paths.certPath, keyPath: paths.keyPath, authority: null, status: null, detail: null };
        break;
      }
      case 'acme':
        return createOrder(deps, input);
      default:
        throw invalidField('source', 'source is import, file, self-signed or csr (acme on the licensed edition).');
    }
    await write(deps, 'tls', async (em, audit) => {
      em.create(CertificateRow, { id, ...row, keySealed: key === null ? null : seal(deps.masterKey, keyContext(id), key), createdAt: now, updatedAt: now });
      audit.note({ action: 'certificate.create', target: { kind: 'certificate', id, name: row.name }, before: null, after: audited(row) });
    });
    return deps.record(id)!;
  };

  /**
   * The planes a change of placements touches keep something to present (safety.ts). `after` maps
   * the placements as they are to those the change leaves.
   */
  const leaveChecks = async (em: EntityManager, planes: readonly TlsPlane[], after: (before: readonly Placement[]) => Placement[], via: Via | null) => {
    if (planes.length === 0) return;
    // Sequential: they run on the transaction's one connection.
    const { rows, placements } = await loadRows(em);
    const settings = await readTlsSettings(em);
    const traffic = await readTraffic(em, deps.now());
    const left = after(placements);
    const serving = servingCounter(rows, deps.masterKey, Math.floor(deps.now() / 1000));
    for (const plane of new Set(planes)) {
      checkLeaving(plane, {
        placedAfter: left.filter((p) => p.plane === plane).length,
        servingBefore: serving(placements, settings.doors, plane),
        servingAfter: serving(left, settings.doors, plane),
      }, settings.httpOff, traffic, via, 'placement');
    }
  };

  return {
    'cert.create': create,

    'cert.delete': ({ id, via }) => write(deps, 'tls', async (em, audit) => {
      const row = await em.findOne(CertificateRow, { id });
      if (!row) return false;
      const planes = (await em.find(PlacementRow, { certificateId: id })).map((p) => p.plane as TlsPlane);
      await leaveChecks(em, planes, (before) => before.filter((p) => p.id !== id), via);
      await em.nativeDelete(PlacementRow, { certificateId: id });
      await em.nativeDelete(CertificateRow, { id });
      audit.note({ action: 'certificate.delete', target: { kind: 'certificate', id, name: row.name }, before: audited(row, planes), after: null });
      return true;
    }),

    'cert.place': async ({ id, planes, replace, via }) => {
      const wanted = checkPlanes(planes);
      let ask = false;
      const placed = await write(deps, 'tls', async (em, audit) => {
        const row = await em.findOne(CertificateRow, { id });
        if (!row) return false;
        if (row.source === 'acme') ask = placeOrder(deps, row, wanted);
        else if (!row.certPem) throw new GatewayError('tls.not-servable', row.source === 'csr' ? 'A pending signing request serves nothing: adopt the authority\'s answer first.' : 'This certificate has not been issued yet; it can be placed once it is.', 'planes');
        if (wanted.includes('internal')) {
          const problem = internalNameProblem(row.names, deps.internalNames);
          if (problem !== null) throw new GatewayError('tls.internal-name', problem, 'planes');
        }
        const current = await em.find(PlacementRow, {}, { orderBy: { placedAt: 'asc' } });
        const placements = current.map((p) => ({ id: p.certificateId, plane: p.plane as TlsPlane, placedAt: p.placedAt }));
        const mine = placements.filter((p) => p.id === id).map((p) => p.plane);
        const arriving = wanted.filter((p) => !mine.includes(p));
        const leaving = mine.filter((p) => !wanted.includes(p));
        const others = new Map((await em.find(CertificateRow, { id: { $ne: id } })).map((r) => [r.id, r]));
        const replaced: Array<{ plane: TlsPlane; other: CertificateRow }> = [];
        for (const plane of arriving) {
          for (const { other, name } of takenOn(id, row.names, plane, placements, others)) {
            if (!replace) {
              throw new GatewayError('tls.name-taken', `On the ${PLANE_NAMES[plane]} plane, "${other.name}" already answers ${name}. Place with replace: true to take its place there (it is kept).`, 'planes', { certificate: other.id, name });
            }
            replaced.push({ plane, other });
          }
        }
        const now = deps.now();
        // What leaves (this one from the planes it leaves, those it replaces from theirs) and what arrives.
        await leaveChecks(em, [...leaving, ...replaced.map((r) => r.plane)], (before) => [
          ...before.filter((p) => !(p.id === id && leaving.includes(p.plane)) && !replaced.some((r) => r.other.id === p.id && r.plane === p.plane)),
          ...arriving.map((plane) => ({ id, plane, placedAt: now })),
        ], via);
        for (const plane of leaving) await em.nativeDelete(PlacementRow, { certificateId: id, plane });
        for (const { plane, other } of replaced) {
          await em.nativeDelete(PlacementRow, { certificateId: other.id, plane });
          audit.note({ action: 'certificate.place', target: { kind: 'certificate', id: other.id, name: other.name }, detail: `replaced on the ${PLANE_NAMES[plane]} plane by "${row.name}"` });
        }
        for (const plane of arriving) em.create(PlacementRow, { certificateId: id, plane, placedAt: now });
        audit.note({ action: 'certificate.place', target: { kind: 'certificate', id, name: row.name }, before: { planes: mine }, after: { planes: wanted } });
        return true;
      });
      if (placed === false) return null;
      if (ask) deps.acme?.request(id);
      return deps.record(id)!;
    },

    'cert.csr': async ({ id }) => {
      const row = await deps.store.em().findOne(CertificateRow, { id, source: 'csr' });
      return row?.csrPem ?? null;
    },

    'cert.answer': async ({ id, cert }) => {
      const done = await write(deps, 'tls', async (em, audit) => {
        const row = await em.findOne(CertificateRow, { id, source: 'csr' });
        if (!row || !row.keySealed) return false;
        if (row.certPem) throw new GatewayError('tls.answer-adopted', 'This signing request has its answer already; make a new request to renew.', 'cert');
        const o = (await signingRequests()).adoptAnswer(cert, unseal(deps.masterKey, keyContext(id), row.keySealed));
        const before = audited(row);
        em.assign(row, { ...material(o), certPem: o.certPem, updatedAt: deps.now() });
        audit.note({ action: 'certificate.answer', target: { kind: 'certificate', id, name: row.name }, before, after: audited(row) });
        return true;
      });
      return done === false ? null : deps.record(id)!;
    },
  };
}
