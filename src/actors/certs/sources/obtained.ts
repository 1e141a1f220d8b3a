/** What every way of obtaining a certificate hands the store: the material and what it says. */
import { keyMatches, readCertificate, readPrivateKey } from '../../../core/tls/pem.ts';
import { GatewayError } from '../../../http/errors.ts';

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

/** A certificate and its key, checked to belong together; `field` names where they came from. */
export function obtain(cert: string, key: string, fields: { cert: string; key: string }): Obtained {
  const info = readCertificate(cert);
  readPrivateKey(key);
  if (!keyMatches(info.chainPem, key)) {
    throw new GatewayError('tls.key-mismatch', `The private key does not belong to the certificate for ${info.names.join(', ') || info.subject}: give the key the certificate was issued for.`, fields.key);
  }
  return {
    names: info.names, issuer: info.issuer, notBefore: info.notBefore, notAfter: info.notAfter,
    fingerprint: info.fingerprint, certPem: info.chainPem, keyPem: key,
  };
}
