/**
 * TLS towards https upstreams (spec 1.2 rule 22): what they are verified against, and which of
 * the two questions a failed verification answered no to.
 */
import { readFileSync } from 'node:fs';
import { createSecureContext, rootCertificates, type SecureContext } from 'node:tls';
import { GatewayError } from '../http/errors.ts';

/**
 * An https upstream is verified against the public authorities Node carries plus the trusted
 * authorities added (spec 1.2 rule 22), and Node's own check that the certificate carries the
 * host of the URL; verification is never switched off. One TLS context holds both sets, built
 * once per set rather than per connection (parsing the public set costs milliseconds).
 */
export function trustContext(authorities: readonly string[]): SecureContext {
  const extra = imageAuthorities();
  try {
    return createSecureContext({ ca: [...rootCertificates, ...extra, ...authorities] });
  } catch {
    // Node ignores an unreadable extra file at start (with a warning); so do we.
    return createSecureContext({ ca: [...rootCertificates, ...authorities] });
  }
}

/**
 * NODE_EXTRA_CA_CERTS, Node's own variable: Node adds that file to its default store only, and an
 * explicit store replaces the default, so the file is named again here. Without this, an image
 * that trusts its own authority through the variable would stop trusting it.
 */
function imageAuthorities(): string[] {
  const file = process.env.NODE_EXTRA_CA_CERTS;
  if (!file) return [];
  try {
    return [readFileSync(file, 'utf8')];
  } catch {
    return [];
  }
}

/** OpenSSL's verdicts that the chain does not lead to a trusted authority (Node gives them as codes). */
const UNTRUSTED = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'SELF_SIGNED_CERT_IN_CHAIN', 'DEPTH_ZERO_SELF_SIGNED_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY', 'UNABLE_TO_GET_ISSUER_CERT', 'CERT_UNTRUSTED', 'CERT_REJECTED',
  'CERT_SIGNATURE_FAILURE', 'UNABLE_TO_DECRYPT_CERT_SIGNATURE', 'UNABLE_TO_DECODE_ISSUER_PUBLIC_KEY',
  'INVALID_CA', 'PATH_LENGTH_EXCEEDED', 'INVALID_PURPOSE', 'CERT_CHAIN_TOO_LONG',
]);
/** The chain would lead somewhere, but a certificate of it is outside its validity. */
const EXPIRED = new Set(['CERT_HAS_EXPIRED', 'ERROR_IN_CERT_NOT_AFTER_FIELD']);
const NOT_YET_VALID = new Set(['CERT_NOT_YET_VALID', 'ERROR_IN_CERT_NOT_BEFORE_FIELD']);

/**
 * The failed question of an https upstream's verification (spec 1.2 rule 22), or undefined when
 * the failure is not about its certificate.
 */
export function certificateFailure(code: string, origin: string): GatewayError | undefined {
  const of = `The certificate of ${origin}`;
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID') {
    // Brackets of an IPv6 host are URL syntax, not part of the name the certificate must carry.
    const host = new URL(origin).hostname.replace(/^\[(.*)\]$/, '$1');
    return new GatewayError('upstream.name-mismatch', `${of} does not carry the name ${host}: the certificate must name the host of the route's upstream, whichever authority signed it.`);
  }
  if (UNTRUSTED.has(code)) {
    return new GatewayError('upstream.untrusted', `${of} is not signed by a trusted authority (add its authority under trusted authorities).`);
  }
  if (EXPIRED.has(code)) return new GatewayError('upstream.untrusted', `${of}, or a certificate of its chain, has expired.`);
  if (NOT_YET_VALID.has(code)) return new GatewayError('upstream.untrusted', `${of}, or a certificate of its chain, is not valid yet.`);
  return undefined;
}
