import { crypto as acme } from 'acme-client';
import { GatewayError, invalidField } from '../../http/errors.ts';
import { normaliseHost } from './names.ts';
import { keyMatches } from './pem.ts';
import { certificateNames, commonNameOf } from './self-signed.ts';

/**
 * A signing request (spec 1.2 rule 2): the gateway makes a P-256 key and a CSR, an authority
 * signs it, and the answer is adopted only when it was made for that key.
 */

export interface SigningSubject {
  readonly organisation?: string;
  readonly unit?: string;
  readonly locality?: string;
  readonly state?: string;
  /** Two letters (ISO 3166), such as FR. */
  readonly country?: string;
  readonly email?: string;
}

export interface SigningRequest {
  readonly names: readonly string[];
  readonly subject?: SigningSubject;
}

export interface PendingRequest {
  /** The CSR, PEM: stored in clear and downloadable again. */
  readonly csr: string;
  /** Its private key, PKCS#8 PEM: sealed by the caller. */
  readonly key: string;
  /** The names it asks for, as it carries them: lower case, addresses normalised, each once. */
  readonly names: string[];
}

const SUBJECT_FIELDS = ['organisation', 'unit', 'locality', 'state', 'country', 'email'] as const;

function checkedSubject(subject: unknown): SigningSubject {
  if (subject === undefined || subject === null) return {};
  if (typeof subject !== 'object' || Array.isArray(subject)) throw invalidField('subject', 'subject is an object of text fields.');
  const given = subject as Record<string, unknown>;
  for (const key of Object.keys(given)) {
    const field = `subject.${key}`;
    const value = given[key];
    if (!(SUBJECT_FIELDS as readonly string[]).includes(key)) {
      throw invalidField(field, `subject holds ${SUBJECT_FIELDS.join(', ')} only.`);
    }
    if (value === undefined) continue;
    if (typeof value !== 'string' || value.trim() === '' || value.length > 64) {
      throw invalidField(field, `${field} is a text of 1 to 64 characters.`);
    }
    if (key === 'country' && !/^[A-Za-z]{2}$/.test(value)) throw invalidField(field, 'subject.country is two letters, such as FR.');
  }
  return given as SigningSubject;
}

export async function makeSigningRequest(request: SigningRequest): Promise<PendingRequest> {
  const names = certificateNames(request.names);
  const subject = checkedSubject(request.subject);
  const key = await acme.createPrivateEcdsaKey('P-256');
  const [, csr] = await acme.createCsr({
    commonName: commonNameOf(names),
    altNames: names,
    ...(subject.organisation !== undefined ? { organization: subject.organisation } : {}),
    ...(subject.unit !== undefined ? { organizationUnit: subject.unit } : {}),
    ...(subject.locality !== undefined ? { locality: subject.locality } : {}),
    ...(subject.state !== undefined ? { state: subject.state } : {}),
    ...(subject.country !== undefined ? { country: subject.country.toUpperCase() } : {}),
    ...(subject.email !== undefined ? { emailAddress: subject.email } : {}),
  }, key);
  return { csr: csr.toString(), key: key.toString(), names };
}

/** The names a signing request asks for: its SAN entries, or its common name when it has none. */
export function readSigningRequest(csrPem: string, field = 'csr'): { names: string[] } {
  let domains: { commonName: string; altNames: string[] };
  try {
    domains = acme.readCsrDomains(csrPem);
  } catch {
    throw new GatewayError('tls.certificate-invalid', 'The signing request cannot be read: it is not a valid CERTIFICATE REQUEST block.', field);
  }
  const asked = domains.altNames.length > 0 ? domains.altNames : domains.commonName ? [domains.commonName] : [];
  return { names: [...new Set(asked.map(normaliseHost))] };
}

/** Whether the authority's answer was made for the pending key (the leaf of the answer is checked). */
export function answerMatches(keyPem: string, certPem: string): boolean {
  return keyMatches(certPem, keyPem);
}
