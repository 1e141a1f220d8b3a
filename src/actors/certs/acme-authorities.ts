/**
 * ACME authorities in the certificate actor (spec 1.2 rules 19 and 24, 2.5): each a named ACME
 * account. The HMAC key of an External Account Binding is kept as its `$name` vault reference,
 * or sealed; the account key is sealed; neither ever leaves the actor (no answer, no audit line).
 */
import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/core';
import { AcmeAuthorityRow, CertificateRow, PlacementRow, VaultEntry } from '../../store/entities.ts';
import { seal, unseal } from '../../core/vault/seal.ts';
import { vaultScope } from '../../core/vault/vault-input.ts';
import { parseAcmeAuthority, SEALED, vaultReference, type AcmeAuthorityInput } from '../../core/tls/acme-authority.ts';
import { GatewayError, invalidField } from '../../http/errors.ts';
import { write } from '../write.ts';
import type { ActorHandlers } from '../../workers/actor-runtime.ts';
import type { AcmeAuthorityRecord, AcmeChallengeType, CertCalls } from './messages.ts';
import type { CertDeps } from './deps.ts';

export const accountContext = (id: string): string => `acme-account/${id}`;
export const hmacContext = (id: string): string => `acme-hmac/${id}`;
/** Orders are certificates named after the authority they ask (spec 1.2 rule 19). */
export const orderName = (authority: string): string => `Ask ${authority}`;
/** The vault row of a `$name` reference: references name the application's vault. */
const vaultRow = (name: string): string => `${vaultScope(null)}/${name}`;

type AuthorityCalls = Pick<CertCalls, 'acme.authority.put' | 'acme.authority.list' | 'acme.authority.delete'>;

/** An authority by id, or else by name, as an order names it. */
export async function findAuthority(em: EntityManager, ref: string): Promise<AcmeAuthorityRow | null> {
  return (await em.findOne(AcmeAuthorityRow, { id: ref })) ?? em.findOne(AcmeAuthorityRow, { name: ref });
}

/** What an answer and the trail show of the HMAC key: the reference, or that a literal is sealed. */
function shownHmac(stored: string): string {
  return vaultReference(stored) !== undefined ? stored : SEALED;
}

function shown(row: AcmeAuthorityRow): Omit<AcmeAuthorityRecord, 'id' | 'accountUrl' | 'orders' | 'armed' | 'createdAt' | 'updatedAt'> {
  return {
    name: row.name, directory: row.directory, rootCa: row.rootCa ?? null, email: row.email ?? null,
    eab: row.eabKid && row.eabHmac ? { kid: row.eabKid, hmacKey: shownHmac(row.eabHmac) } : null,
    termsAccepted: row.termsAccepted, challenge: row.challenge as AcmeChallengeType,
  };
}

/** The trail's view: the root CA as present or not (a PEM says nothing to a reader), no secret. */
function audited(row: AcmeAuthorityRow): Record<string, unknown> {
  const { rootCa, ...rest } = shown(row);
  return { ...rest, rootCa: rootCa !== null };
}

export async function authorityRecords(em: EntityManager): Promise<AcmeAuthorityRecord[]> {
  const [rows, orders, placed] = await Promise.all([
    em.find(AcmeAuthorityRow, {}, { orderBy: { name: 'asc' } }),
    em.find(CertificateRow, { source: 'acme' }),
    em.find(PlacementRow, {}),
  ]);
  const placedIds = new Set(placed.map((p) => p.certificateId));
  return rows.map((row) => {
    const mine = orders.filter((o) => o.authority === row.id);
    return {
      id: row.id, ...shown(row), accountUrl: row.accountUrl ?? null,
      orders: mine.length, armed: mine.some((o) => placedIds.has(o.id)),
      createdAt: row.createdAt, updatedAt: row.updatedAt,
    };
  });
}

/** The stored form of the HMAC key: a reference as written (it must name a vault value), or sealed. */
async function storedHmac(em: EntityManager, masterKey: Buffer, id: string, eab: NonNullable<AcmeAuthorityInput['eab']>, before: AcmeAuthorityRow | null): Promise<string> {
  if (eab.hmacKey === undefined) {
    if (before?.eabHmac) return before.eabHmac;
    throw invalidField('eab.hmacKey', 'eab.hmacKey is required: the HMAC key the authority gave (base64url), or a $name vault reference.');
  }
  const ref = vaultReference(eab.hmacKey);
  if (ref === undefined) return seal(masterKey, hmacContext(id), eab.hmacKey);
  if (!(await em.findOne(VaultEntry, { id: vaultRow(ref) }))) {
    throw invalidField('eab.hmacKey', `The vault holds no value named ${ref}: add it first (PUT /api/vault/${ref}), or give the HMAC key itself.`);
  }
  return eab.hmacKey;
}

export function acmeAuthorityHandlers(deps: CertDeps): ActorHandlers<AuthorityCalls> {
  return {
    'acme.authority.put': async ({ id: given, authority }) => {
      const input = parseAcmeAuthority(authority);
      const id = given ?? randomUUID();
      const done = await write(deps, 'tls', async (em, audit) => {
        const before = given === null ? null : await em.findOne(AcmeAuthorityRow, { id });
        if (given !== null && !before) return false;
        const taken = await em.findOne(AcmeAuthorityRow, { name: input.name, id: { $ne: id } });
        if (taken) throw new GatewayError('acme.authority-taken', `An ACME authority is named "${input.name}" already.`, 'name');
        const eabHmac = input.eab ? await storedHmac(em, deps.masterKey, id, input.eab, before) : null;
        const was = before ? audited(before) : null;
        const hadHmac = Boolean(before?.eabHmac);
        const now = deps.now();
        const fields = {
          name: input.name, directory: input.directory, rootCa: input.rootCa ?? null, email: input.email ?? null,
          eabKid: input.eab?.kid ?? null, eabHmac, termsAccepted: input.termsAccepted, challenge: input.challenge ?? 'http-01', updatedAt: now,
        };
        if (before) {
          // An account belongs to one directory: a new directory gets a fresh account at the next order.
          const moved = before.directory !== input.directory;
          if (before.name !== input.name) await em.nativeUpdate(CertificateRow, { source: 'acme', authority: id }, { name: orderName(input.name), updatedAt: now });
          em.assign(before, { ...fields, ...(moved ? { accountKeySealed: null, accountUrl: null } : {}) });
          // A new literal key shows as `sealed` before and after: the line says it moved, never what it is.
          const rekeyed = input.eab?.hmacKey !== undefined && vaultReference(input.eab.hmacKey) === undefined && hadHmac;
          const detail = [moved ? 'new directory: a fresh account at the next order' : '', rekeyed ? 'EAB HMAC key replaced (kept sealed)' : ''].filter(Boolean).join('; ');
          audit.note({ action: 'acme.authority.update', target: { kind: 'settings', id: `acme.authority/${id}`, name: input.name }, before: was, after: audited(before), ...(detail ? { detail } : {}) });
        } else {
          const row = em.create(AcmeAuthorityRow, { id, ...fields, accountKeySealed: null, accountUrl: null, createdAt: now });
          audit.note({ action: 'acme.authority.create', target: { kind: 'settings', id: `acme.authority/${id}`, name: input.name }, before: null, after: audited(row) });
        }
        return true;
      });
      if (done === false) return null;
      return (await authorityRecords(deps.store.em())).find((r) => r.id === id)!;
    },

    'acme.authority.list': () => authorityRecords(deps.store.em()),

    'acme.authority.delete': ({ id }) => write(deps, 'tls', async (em, audit) => {
      const row = await em.findOne(AcmeAuthorityRow, { id });
      if (!row) return false;
      const orders = await em.find(CertificateRow, { source: 'acme', authority: id });
      if (orders.length > 0) {
        throw new GatewayError('acme.authority-in-use', `"${row.name}" is asked by ${orders.length === 1 ? 'an order' : `${orders.length} orders`} (${orders.map((o) => o.id).join(', ')}): delete ${orders.length === 1 ? 'it' : 'them'} first.`);
      }
      await em.nativeDelete(AcmeAuthorityRow, { id });
      audit.note({ action: 'acme.authority.delete', target: { kind: 'settings', id: `acme.authority/${id}`, name: row.name }, before: audited(row), after: null });
      return true;
    }),
  };
}

/** The secrets an order needs, opened: the account key (absent before the first order) and the EAB. */
export async function authoritySecrets(em: EntityManager, masterKey: Buffer, row: AcmeAuthorityRow): Promise<{ accountKey?: string; eab?: { kid: string; hmacKey: string } }> {
  const accountKey = row.accountKeySealed ? unseal(masterKey, accountContext(row.id), row.accountKeySealed) : undefined;
  if (!row.eabKid || !row.eabHmac) return accountKey === undefined ? {} : { accountKey };
  const ref = vaultReference(row.eabHmac);
  let hmacKey: string;
  if (ref === undefined) {
    hmacKey = unseal(masterKey, hmacContext(row.id), row.eabHmac);
  } else {
    const entry = await em.findOne(VaultEntry, { id: vaultRow(ref) });
    if (!entry) throw new GatewayError('field.invalid', `The EAB HMAC key of "${row.name}" names the vault value ${ref}, which the vault no longer holds.`);
    hmacKey = unseal(masterKey, entry.id, entry.sealed);
  }
  return { ...(accountKey === undefined ? {} : { accountKey }), eab: { kid: row.eabKid, hmacKey } };
}
