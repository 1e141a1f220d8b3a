import { orm } from '../../../store/packages.ts';
import { GatewayError } from '../../../http/errors.ts';
import { TrustedAuthority } from '../../../store/entities.ts';
import { newId } from '../../../core/secrets.ts';
import { readAuthorityPem } from '../../../core/tls/authorities.ts';
import type { AuthorityRecord, ConfigCalls } from '../messages.ts';
import { write, type WriteDeps } from '../../write.ts';
import type { ActorHandlers } from '../../../workers/actor-runtime.ts';

export function authorityRecord(a: TrustedAuthority): AuthorityRecord {
  return {
    id: a.id, name: a.name, subjects: a.subjects, notAfter: Math.floor(a.notAfter / 1000),
    fingerprint: a.fingerprint, count: a.count, createdAt: a.createdAt,
  };
}

/** What the trail keeps of an authority: public facts, never the PEM itself. */
function audited(r: AuthorityRecord) {
  return { name: r.name, fingerprint: r.fingerprint, subjects: r.subjects, count: r.count, notAfter: r.notAfter };
}

function nameTaken(name: string): GatewayError {
  return new GatewayError('tls.authority-name-taken', `A trusted authority named "${name}" exists already.`, 'name');
}

type AuthorityCalls = Pick<ConfigCalls, 'authority.create' | 'authority.list' | 'authority.delete'>;

/** Trusted authorities (spec 1.2 rule 22): every node verifies https upstreams against them once the snapshot lands. */
export function authorityHandlers(deps: WriteDeps): ActorHandlers<AuthorityCalls> {
  return {
    'authority.create': async ({ name, pem }) => {
      // Read before the transaction: a large bundle is not parsed under SQLite's write lock.
      const read = readAuthorityPem(pem);
      return write(deps, 'trusted-authority', async (em, audit) => {
        if (await em.findOne(TrustedAuthority, { name }, { fields: ['id'] })) throw nameTaken(name);
        const row = em.create(TrustedAuthority, {
          id: newId(), name, pem: read.pems.join(''), subjects: read.subjects, notAfter: read.notAfter * 1000,
          fingerprint: read.fingerprint, count: read.count, createdAt: deps.now(),
        });
        try {
          await em.flush();
        } catch (err) {
          // Another node took the name between the look and the insert.
          if (err instanceof orm.UniqueConstraintViolationException) throw nameTaken(name);
          throw err;
        }
        const record = authorityRecord(row);
        audit.note({ target: { kind: 'trusted-authority', id: row.id, name }, before: null, after: audited(record) });
        return record;
      });
    },
    'authority.list': async () => (await deps.store.em().find(TrustedAuthority, {}, { orderBy: { name: 'asc', id: 'asc' } })).map(authorityRecord),
    'authority.delete': ({ id }) => write(deps, 'trusted-authority', async (em, audit) => {
      const old = await em.findOne(TrustedAuthority, { id });
      if (!old) return false;
      const before = audited(authorityRecord(old));
      await em.nativeDelete(TrustedAuthority, { id });
      audit.note({ target: { kind: 'trusted-authority', id, name: old.name }, before, after: null });
      return true;
    }),
  };
}
