import { GatewayError } from '../../http/errors.ts';
import { hasPrivateKey, parseCertificates, readableName } from './pem.ts';

/**
 * Trusted authorities (spec 1.2 rule 22): public certificates only, one or several in a PEM,
 * trusted for calls the gateway makes to https upstreams in addition to the image's own.
 */

export interface AuthoritiesInfo {
  /** The readable subject of each certificate, in order. */
  readonly subjects: string[];
  /** Epoch seconds: the earliest end of validity among them. */
  readonly notAfter: number;
  /** SHA-256 of the first certificate, as openssl prints it. */
  readonly fingerprint: string;
  readonly count: number;
  /** Each certificate's block, normalised (text around the blocks dropped). */
  readonly pems: string[];
}

export function readAuthorities(pem: string, field = 'pem'): AuthoritiesInfo {
  if (hasPrivateKey(pem)) {
    throw new GatewayError(
      'tls.key-in-authority',
      'This PEM holds a private key; a trusted authority is a public certificate only: remove the key and send the certificates.',
      field,
    );
  }
  const certs = parseCertificates(pem, field);
  return {
    subjects: certs.map((c) => readableName(c.x509.subject)),
    notAfter: Math.min(...certs.map((c) => Math.floor(Date.parse(c.x509.validTo) / 1000))),
    fingerprint: certs[0]!.x509.fingerprint256,
    count: certs.length,
    pems: certs.map((c) => c.block.pem),
  };
}
