/**
 * An ACME authority as written (spec 2.5 "ACME authority"; CONTRACT.md "TLS"), checked field by
 * field. Pure: the store and the sealing are the certificate actor's.
 */
import { invalidField } from '../../http/errors.ts';
import { objectBody } from '../validate.ts';
import { VAULT_NAME } from '../vault/vault-input.ts';
import { readAuthorityPem } from './authorities.ts';

export type AcmeChallengeType = 'http-01' | 'tls-alpn-01';

/** An authority as written; `eab.hmacKey` left out (or `sealed`) keeps the key stored. */
export interface AcmeAuthorityInput {
  readonly name: string;
  readonly directory: string;
  readonly rootCa?: string | null;
  readonly email?: string | null;
  readonly eab?: { readonly kid: string; readonly hmacKey?: string } | null;
  readonly termsAccepted: boolean;
  readonly challenge?: AcmeChallengeType;
}

const FIELDS = ['name', 'directory', 'rootCa', 'email', 'eab', 'termsAccepted', 'challenge'];
const CHALLENGES: readonly AcmeChallengeType[] = ['http-01', 'tls-alpn-01'];
const LABEL = /^[^\u0000-\u001f\u007f]{1,100}$/;
const EMAIL = /^[^\s@<>(),;:"]+@[^\s@<>(),;:"]+\.[^\s@<>(),;:"]+$/;
/** An EAB HMAC key as authorities hand it out: base64url (RFC 8555 section 7.3.4). */
const HMAC = /^[A-Za-z0-9_-]{16,1024}={0,2}$/;
/** What an answer shows for a literal HMAC key; written back, it keeps the key stored. */
export const SEALED = 'sealed';

/** A `$name` vault reference, or undefined when `value` is no reference. */
export function vaultReference(value: string): string | undefined {
  if (!value.startsWith('$')) return undefined;
  const name = value.slice(1).replace(/^\{(.*)\}$/, '$1');
  return VAULT_NAME.test(name) ? name : undefined;
}

function text(body: Readonly<Record<string, unknown>>, field: string, max: number, hint: string): string | undefined {
  const v = body[field];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string' || v.trim() === '' || v.length > max) throw invalidField(field, `${field} must be ${hint}.`);
  return v.trim();
}

function directoryOf(value: unknown): string {
  if (typeof value !== 'string' || value.length > 2000) throw invalidField('directory', 'directory is the authority\'s ACME directory URL (https://…).');
  let url: URL;
  try {
    url = new URL(value.trim());
  } catch {
    throw invalidField('directory', 'directory is the authority\'s ACME directory URL, such as https://acme-v02.api.letsencrypt.org/directory.');
  }
  if (url.protocol !== 'https:') throw invalidField('directory', 'An ACME directory is reached over HTTPS (RFC 8555): write https://….');
  if (url.username !== '' || url.password !== '') throw invalidField('directory', 'The directory URL carries no user name or password.');
  return url.toString();
}

function eabOf(value: unknown): AcmeAuthorityInput['eab'] {
  if (value === undefined || value === null) return null;
  const eab = objectBody(value, ['kid', 'hmacKey'], 'the External Account Binding');
  const kid = eab.kid;
  if (typeof kid !== 'string' || kid.trim() === '' || kid.length > 200) throw invalidField('eab.kid', 'eab.kid is the key id the authority gave, 1 to 200 characters.');
  const hmacKey = eab.hmacKey;
  if (hmacKey === undefined || hmacKey === null || hmacKey === SEALED) return { kid: kid.trim() };
  if (typeof hmacKey !== 'string') throw invalidField('eab.hmacKey', 'eab.hmacKey is a $name vault reference or the HMAC key the authority gave (base64url).');
  if (hmacKey.startsWith('$')) {
    if (vaultReference(hmacKey) === undefined) throw invalidField('eab.hmacKey', 'A vault reference is $name: 1 to 128 letters, digits or "_", not starting with a digit.');
    return { kid: kid.trim(), hmacKey };
  }
  if (!HMAC.test(hmacKey)) throw invalidField('eab.hmacKey', 'eab.hmacKey is the HMAC key the authority gave, in base64url (16 to 1024 characters), or a $name vault reference.');
  return { kid: kid.trim(), hmacKey };
}

/** The authority as written, normalised; a refusal names the field and says what is expected. */
export function parseAcmeAuthority(value: unknown): AcmeAuthorityInput {
  const body = objectBody(value, FIELDS, 'an ACME authority');
  const name = text(body, 'name', 100, 'a label of 1 to 100 characters');
  if (name === undefined || !LABEL.test(name)) throw invalidField('name', 'name is a label of 1 to 100 characters (orders are named "Ask <name>").');
  const rootCaText = text(body, 'rootCa', 64 * 1024, 'the PEM of the authority that signs the ACME server\'s HTTPS certificate');
  const rootCa = rootCaText === undefined ? null : readAuthorityPem(rootCaText, 'rootCa').pems.join('');
  const email = text(body, 'email', 254, 'an e-mail address');
  if (email !== undefined && !EMAIL.test(email)) throw invalidField('email', 'email is the account\'s contact address, such as ops@example.com.');
  if (typeof body.termsAccepted !== 'boolean') {
    throw invalidField('termsAccepted', 'termsAccepted is true once you accept the authority\'s terms of service, false until then; it is never assumed.');
  }
  const challenge = body.challenge ?? 'http-01';
  if (!CHALLENGES.includes(challenge as AcmeChallengeType)) {
    throw invalidField('challenge', 'challenge is http-01 (answered on the plain port) or tls-alpn-01 (answered on the HTTPS port, open only while a certificate is served there).');
  }
  return {
    name, directory: directoryOf(body.directory), rootCa, email: email ?? null, eab: eabOf(body.eab),
    termsAccepted: body.termsAccepted, challenge: challenge as AcmeChallengeType,
  };
}
