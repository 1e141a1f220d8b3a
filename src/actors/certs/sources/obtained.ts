/** What every way of obtaining a certificate hands the store: the material and what it says. */
import { leafFirst } from '../../../core/tls/chain.ts';
import { parseCertificates, readCertificate, readPrivateKey } from '../../../core/tls/pem.ts';
import { GatewayError } from '../../../http/errors.ts';
import { doorContext } from '../../../http/door-context.ts';

export interface Obtained {
  readonly names: readonly string[];
  readonly issuer: string;
  /** Epoch seconds. */
  readonly notBefore: number;
  readonly notAfter: number;
  readonly fingerprint: string;
  /** Leaf and chain. */
  readonly certPem: string;
  readonly keyPem: string;
}

/**
 * A certificate and its key, checked to belong together, the chain put leaf first (chain.ts);
 * `field` names where they came from.
 */
export function obtain(cert: string, key: string, fields: { cert: string; key: string }): Obtained {
  const certs = parseCertificates(cert, fields.cert);
  const chain = leafFirst(certs, readPrivateKey(key, fields.key), fields.cert);
  if (chain === null) {
    const info = readCertificate(cert, fields.cert);
    throw new GatewayError('tls.key-mismatch', `The private key does not belong to the certificate for ${info.names.join(', ') || info.subject}: give the key the certificate was issued for.`, fields.key);
  }
  const info = readCertificate(chain.map((c) => c.block.pem).join(''), fields.cert);
  // What the doors will do with it: a certificate OpenSSL refuses to present (a digest too weak,
  // a key too small) is refused here, with OpenSSL's reason, rather than stored and never served.
  try {
    doorContext(info.chainPem, key);
  } catch (err) {
    throw new GatewayError('tls.certificate-invalid', `The certificate cannot be presented by an HTTPS door: OpenSSL refuses it (${(err as Error).message.replace(/^error:[0-9A-F]+:[^:]*:+/, '')}).`, fields.cert);
  }
  return {
    names: info.names, issuer: info.issuer, notBefore: info.notBefore, notAfter: info.notAfter,
    fingerprint: info.fingerprint, certPem: info.chainPem, keyPem: key,
  };
}
