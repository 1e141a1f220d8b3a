/**
 * Trusted authorities (spec 1.2 rule 22): the certificates, beyond the public ones Node carries,
 * that an https upstream's chain may lead to. A trusted authority is public material only, so a
 * PEM that holds a private key of any kind is refused outright, with the reason: keeping it would
 * store a secret in clear where nothing expects one.
 */
import { X509Certificate } from 'node:crypto';
import { GatewayError, invalidField } from '../../http/errors.ts';
import { objectBody, requiredString } from '../validate.ts';
import { pemBlocks } from './pem.ts';

export interface AuthorityPem {
  /** Each certificate's subject, one line (`CN=Acme Root, O=Acme`), in the order of the PEM. */
  readonly subjects: string[];
  /** Epoch seconds: the earliest end of validity among the certificates. */
  readonly notAfter: number;
  /** SHA-256 of the first certificate, upper-case hex pairs joined by colons. */
  readonly fingerprint: string;
  readonly count: number;
  /** Each certificate re-encoded alone: what is stored and trusted, nothing else of the text. */
  readonly pems: string[];
}

/** Any private key block, whatever its kind (PKCS#8, RSA, EC, OpenSSH, encrypted). */
const PRIVATE_KEY = /-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----/i;

function invalid(sentence: string, field: string): GatewayError {
  return new GatewayError('tls.certificate-invalid', sentence, field);
}

/** The X.509 subject as one line; Node gives one attribute a line. */
function subjectLine(cert: X509Certificate): string {
  return cert.subject.split('\n').filter((s) => s !== '').join(', ');
}

/** Reads an authority's PEM: one or several certificates, and nothing else. */
/** `field` names the request field the PEM came in (`pem`, or an ACME authority's `rootCa`). */
export function readAuthorityPem(pem: string, field = 'pem'): AuthorityPem {
  if (PRIVATE_KEY.test(pem)) {
    throw new GatewayError('tls.key-in-authority', 'The PEM holds a private key, and it was not stored: a trusted authority is a public certificate only. Send the authority\'s certificate without its key.', field);
  }
  const certs: X509Certificate[] = [];
  let index = 0;
  for (const block of pemBlocks(pem)) {
    index++;
    const label = block.label;
    if (label !== 'CERTIFICATE') throw invalid(`Block ${index} of the PEM is a ${label}; a trusted authority holds certificates only.`, field);
    try {
      certs.push(new X509Certificate(block.text));
    } catch {
      throw invalid(`Certificate ${index} of the PEM cannot be read as an X.509 certificate.`, field);
    }
  }
  const first = certs[0];
  if (first === undefined) throw invalid('The PEM holds no certificate (-----BEGIN CERTIFICATE----- … -----END CERTIFICATE-----).', field);
  const ends = certs.map((c) => Math.floor(Date.parse(c.validTo) / 1000));
  return {
    subjects: certs.map(subjectLine),
    notAfter: Math.min(...ends),
    fingerprint: first.fingerprint256,
    count: certs.length,
    pems: certs.map((c) => c.toString()),
  };
}

export const AUTHORITY_NAME_MAX = 100;
/** A label a person reads: any text but control characters. */
const NAME_PATTERN = /^[^\u0000-\u001f\u007f]+$/;

export interface AuthorityInput {
  readonly name: string;
  readonly pem: string;
}

/** `{name, pem}` of POST /api/trusted-authorities; the PEM itself is read by `readAuthorityPem`. */
export function parseAuthority(value: unknown): AuthorityInput {
  const body = objectBody(value, ['name', 'pem'], 'a trusted authority');
  const name = requiredString(body, 'name', { max: AUTHORITY_NAME_MAX, pattern: NAME_PATTERN, hint: `a name of 1 to ${AUTHORITY_NAME_MAX} characters, without control characters` });
  const pem = body.pem;
  if (typeof pem !== 'string' || pem.trim() === '') throw invalidField('pem', 'pem is required: the authority\'s certificates in PEM text (one or several).');
  return { name: name.trim(), pem };
}
