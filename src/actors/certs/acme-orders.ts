/**
 * ACME orders (spec 1.2 rule 19; CONTRACT.md "TLS"): certificates named `Ask <authority>`,
 * state `requesting` until issued, asked of the authority once placed on the console or the
 * application. ACME is not offered on the internal plane (spec 1.2 rule 4).
 */
import { randomUUID } from 'node:crypto';
import { CertificateRow } from '../../store/entities.ts';
import { certificateNameProblem, isIpAddress } from '../../core/tls/names.ts';
import { stringList } from '../../core/validate.ts';
import { GatewayError } from '../../http/errors.ts';
import { write } from '../write.ts';
import type { CertRecord, NewCertificate, TlsPlane } from './messages.ts';
import { findAuthority, orderName } from './acme-authorities.ts';
import type { CertDeps } from './deps.ts';

const NOT_PLACED = 'placed nowhere: the authority is asked once the order is placed on the console or the application';
const ASKED = 'asked of the authority; waiting for its answer';
const COMMUNITY = 'ACME issuance belongs to the licensed edition; this gateway runs the community edition (GATEWAY_EDITION).';

/** Why an ACME order cannot carry `name`, or undefined: a full host name, proved by HTTP-01 or TLS-ALPN-01. */
function orderNameProblem(name: string): string | undefined {
  const problem = certificateNameProblem(name);
  if (problem) return problem;
  if (name.includes('*')) return 'is a wildcard, which only a DNS-01 challenge proves and this gateway answers HTTP-01 and TLS-ALPN-01: order each full name';
  if (isIpAddress(name)) return 'is an IP address: an ACME order here carries host names';
  return undefined;
}

export async function createOrder(deps: CertDeps, input: Extract<NewCertificate, { source: 'acme' }>): Promise<CertRecord> {
  if (!deps.acme?.licensed) throw new GatewayError('licensed-edition', COMMUNITY);
  if (typeof input.authority !== 'string' || input.authority.trim() === '') {
    throw new GatewayError('field.invalid', 'authority is the id or the name of an ACME authority (GET /api/acme/authorities).', 'authority');
  }
  const names = stringList(input.names, 'names', { min: 1, max: 100, item: (n) => orderNameProblem(n.trim().toLowerCase()) })
    .map((n) => n.trim().toLowerCase());
  const id = randomUUID();
  await write(deps, 'tls', async (em, audit) => {
    const authority = await findAuthority(em, input.authority.trim());
    if (!authority) throw new GatewayError('acme.authority-unknown', `No ACME authority has the id or name "${input.authority}".`, 'authority');
    if (!authority.termsAccepted) {
      throw new GatewayError('acme.terms-not-accepted', `The terms of service of "${authority.name}" have not been accepted: accept them on the authority (termsAccepted: true) before ordering; nothing was sent to it.`, 'authority');
    }
    const now = deps.now();
    const name = orderName(authority.name);
    em.create(CertificateRow, {
      id, name, source: 'acme', names: [...new Set(names)], issuer: null, notBefore: null, notAfter: null, fingerprint: null,
      certPem: null, keySealed: null, csrPem: null, certPath: null, keyPath: null,
      authority: authority.id, status: 'requesting', detail: NOT_PLACED, createdAt: now, updatedAt: now,
    });
    audit.note({ action: 'certificate.create', target: { kind: 'certificate', id, name }, before: null, after: { name, names, source: 'acme', authority: authority.name } });
  });
  return deps.record(id)!;
}

/**
 * Inside a placement's write: refuses what an order cannot be placed on, and says whether the
 * authority is to be asked once the placement is committed. The row's status moves with it.
 */
export function placeOrder(deps: CertDeps, row: CertificateRow, planes: readonly TlsPlane[]): boolean {
  if (planes.includes('internal')) {
    throw new GatewayError('tls.internal-name', 'ACME is not offered on the internal plane: its HTTPS door presents a certificate from the cluster\'s own PKI (a file-system certificate). Place this order on the console or the application.', 'planes');
  }
  if (row.certPem) return planes.length > 0 && deps.acme?.licensed === true;
  if (planes.length > 0 && !deps.acme?.licensed) throw new GatewayError('licensed-edition', `${COMMUNITY} An order not issued yet cannot be placed.`);
  row.status = 'requesting';
  row.detail = planes.length > 0 ? ASKED : NOT_PLACED;
  row.updatedAt = deps.now();
  return planes.length > 0;
}
