/**
 * A certificate bundle in the order a TLS server sends it (RFC 8446 4.4.2, RFC 5246 7.4.2): the
 * leaf first, then each certificate that certifies the one before. Operators paste bundles as
 * their authority or their tooling gave them, some with the root or the intermediate first; a
 * door serving that order makes clients fail the handshake, and the key check read the wrong
 * certificate as the leaf ("the key does not match"). The leaf is the certificate the private key
 * belongs to; the others are put behind it by who issued whom. A certificate that certifies
 * nothing in the chain is refused here, with its place in the text, rather than sent to every
 * client that connects.
 */
import type { KeyObject, X509Certificate } from 'node:crypto';
import { GatewayError } from '../../http/errors.ts';
import { isSelfSigned, readableName, type PemBlock } from './pem.ts';

export interface ChainEntry {
  readonly block: PemBlock;
  readonly x509: X509Certificate;
}

/** Whether `issuer` signed `cert`: its subject is the cert's issuer and its key verifies the signature. */
function certifies(issuer: X509Certificate, cert: X509Certificate): boolean {
  try {
    return cert.checkIssued(issuer) && cert.verify(issuer.publicKey);
  } catch {
    return false;
  }
}

/**
 * The bundle leaf first, or null when the key belongs to none of its certificates (the caller
 * says which mismatch it is). The same certificate given twice counts once.
 */
export function leafFirst(certs: readonly ChainEntry[], key: KeyObject, field: string): ChainEntry[] | null {
  const leaf = certs.find((c) => c.x509.checkPrivateKey(key));
  if (leaf === undefined) return null;
  const seen = new Set<string>([leaf.x509.fingerprint256]);
  const rest = certs.filter((c) => {
    if (seen.has(c.x509.fingerprint256)) return false;
    seen.add(c.x509.fingerprint256);
    return true;
  });
  const ordered: ChainEntry[] = [leaf];
  for (;;) {
    const last = ordered[ordered.length - 1]!.x509;
    if (rest.length === 0 || isSelfSigned(last)) break;
    const next = rest.findIndex((c) => certifies(c.x509, last));
    if (next < 0) break;
    ordered.push(rest.splice(next, 1)[0]!);
  }
  const stray = rest[0];
  if (stray !== undefined) {
    const at = certs.indexOf(stray) + 1;
    const end = ordered[ordered.length - 1]!.x509;
    throw new GatewayError('tls.chain-invalid',
      `Certificate ${at} of ${certs.length} (${readableName(stray.x509.subject)}) does not certify any certificate of the chain that starts at the leaf `
      + `${readableName(leaf.x509.subject)} (the chain stops at ${readableName(end.subject)}, issued by ${readableName(end.issuer)}): `
      + 'give the leaf and the intermediates its authority sent with it, and nothing else.', field);
  }
  return ordered;
}
