import { generateKeyPairSync, randomBytes } from 'node:crypto';
import forge from 'node-forge';
import { GatewayError, invalidField } from '../../http/errors.ts';
import { certificateNameProblem, isIpAddress, normaliseHost } from './names.ts';

/**
 * A self-signed certificate (spec 1.2 rule 2): the key from node's native generator (fast), the
 * certificate built and signed by node-forge, since node:crypto cannot issue certificates.
 */

export interface SelfSignedRequest {
  readonly names: readonly string[];
  /** Validity in days, 1 to 3650; 365 when absent. */
  readonly days?: number;
  /** Epoch milliseconds: the test clock's, not the machine's. */
  readonly now: number;
}

export interface Material {
  /** The certificate, PEM. */
  readonly cert: string;
  /** Its private key, PKCS#8 PEM. */
  readonly key: string;
}

const MAX_NAMES = 100;
const DAY_MS = 86_400_000;

/**
 * The names refused with the first reason, else the names deduplicated (case aside), host names
 * in lower case and addresses normalised. Shared with the signing request.
 */
export function certificateNames(names: readonly unknown[], field = 'names'): string[] {
  if (!Array.isArray(names) || names.length === 0) {
    throw new GatewayError('tls.name-invalid', 'Give at least one name for the certificate to carry.', field);
  }
  if (names.length > MAX_NAMES) {
    throw new GatewayError('tls.name-invalid', `A certificate carries at most ${MAX_NAMES} names; ${names.length} were given.`, field);
  }
  for (const name of names) {
    if (typeof name !== 'string') throw new GatewayError('tls.name-invalid', 'Each name is a text.', field);
    const problem = certificateNameProblem(name);
    if (problem !== null) throw new GatewayError('tls.name-invalid', `"${name}": ${problem}.`, field);
  }
  return [...new Set((names as string[]).map(normaliseHost))];
}

/** A common name fits in 64 characters (RFC 5280 upper bound); browsers read the SAN anyway. */
export function commonNameOf(names: readonly string[]): string {
  return names.find((n) => n.length <= 64) ?? 'Meerkat';
}

/** A positive serial of 128 bits: the first byte's high bit clear so DER reads it as positive. */
function serialNumber(): string {
  const bytes = randomBytes(16);
  bytes[0] = (bytes[0]! & 0x7f) | 0x01;
  return bytes.toString('hex');
}

export function selfSigned(request: SelfSignedRequest): Material {
  const names = certificateNames(request.names);
  const days = request.days ?? 365;
  if (!Number.isInteger(days) || days < 1 || days > 3650) throw invalidField('days', 'days is a whole number from 1 to 3650.');

  const pair = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const key = pair.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  const publicPem = pair.publicKey.export({ type: 'spki', format: 'pem' }).toString();

  const cert = forge.pki.createCertificate();
  cert.publicKey = forge.pki.publicKeyFromPem(publicPem);
  cert.serialNumber = serialNumber();
  // A minute back, so a client whose clock is slightly behind does not see it as not yet valid.
  cert.validity.notBefore = new Date(request.now - 60_000);
  cert.validity.notAfter = new Date(request.now + days * DAY_MS);
  const subject = [{ name: 'commonName', value: commonNameOf(names) }];
  cert.setSubject(subject);
  cert.setIssuer(subject);
  cert.setExtensions([
    { name: 'basicConstraints', cA: false, critical: true },
    { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
    { name: 'extKeyUsage', serverAuth: true },
    { name: 'subjectAltName', altNames: names.map((n) => (isIpAddress(n) ? { type: 7, ip: n } : { type: 2, value: n })) },
    { name: 'subjectKeyIdentifier' },
  ]);
  cert.sign(forge.pki.privateKeyFromPem(key), forge.md.sha256.create());
  return { cert: forge.pki.certificateToPem(cert).replace(/\r\n/g, '\n'), key };
}
