/** How the HTTPS doors present a certificate. */
import { createSecureContext, type SecureContext } from 'node:tls';

/**
 * TLS 1.2 suites the doors offer: forward secrecy and authenticated encryption only (the
 * "intermediate" profile most servers follow). Node's default adds static-RSA and CBC-SHA1 suites
 * through "HIGH". TLS 1.3's suites are Node's own, all of them sound.
 */
const TLS12_CIPHERS = [
  'ECDHE-ECDSA-AES128-GCM-SHA256', 'ECDHE-RSA-AES128-GCM-SHA256', 'ECDHE-ECDSA-AES256-GCM-SHA384', 'ECDHE-RSA-AES256-GCM-SHA384',
  'ECDHE-ECDSA-CHACHA20-POLY1305', 'ECDHE-RSA-CHACHA20-POLY1305', 'DHE-RSA-AES128-GCM-SHA256', 'DHE-RSA-AES256-GCM-SHA384',
].join(':');

/** The context a door presents a certificate with. */
export function doorContext(cert: string, key: string): SecureContext {
  return createSecureContext({ cert, key, ciphers: `TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256:TLS_AES_128_GCM_SHA256:${TLS12_CIPHERS}`, minVersion: 'TLSv1.2' });
}

