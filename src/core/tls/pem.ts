import { X509Certificate, createPrivateKey, type KeyObject } from 'node:crypto';
import { GatewayError } from '../../http/errors.ts';
import { certificateNameProblem, isIpAddress, normaliseHost } from './names.ts';

/**
 * PEM text as people paste it (CRLF, text around the blocks, indented or long lines) read into
 * blocks, and the certificate and key facts the gateway keeps. Pure: no store, no files.
 */

export interface PemBlock {
  /** The label after BEGIN: CERTIFICATE, PRIVATE KEY, EC PRIVATE KEY, CERTIFICATE REQUEST, … */
  readonly type: string;
  /** The block alone: LF line endings, base64 wrapped at 64, legacy headers kept, ending with \n. */
  readonly pem: string;
}

export interface CertInfo {
  /** SAN DNS names in lower case and IP addresses normalised; the subject CN only when there is no SAN. */
  readonly names: string[];
  readonly subject: string;
  readonly issuer: string;
  /** Epoch seconds. */
  readonly notBefore: number;
  readonly notAfter: number;
  /** SHA-256 of the leaf, upper-case hex pairs separated by colons (as openssl prints it). */
  readonly fingerprint: string;
  readonly selfSigned: boolean;
  readonly chainLength: number;
  readonly leafPem: string;
  /** Leaf then intermediates, as given, normalised. */
  readonly chainPem: string;
}

/** A BEGIN or END line's marker; no span between them is matched by an expression. */
const MARKER = /-----(BEGIN|END) ([A-Z0-9 ]+)-----/g;

export interface RawBlock {
  readonly label: string;
  /** What lies between the BEGIN and END lines. */
  readonly body: string;
  /** The block from BEGIN to END, as written. */
  readonly text: string;
}

/**
 * The blocks of a PEM text: each BEGIN with the first END of its label after it, text between
 * blocks ignored, a BEGIN without its END skipped. The same blocks as the expression
 * `-----BEGIN (L)-----[\s\S]*?-----END \1-----`, whose lazy span rescans the rest of the text
 * for every BEGIN that has no END: a megabyte of BEGIN lines held an actor for twenty seconds.
 * Here the markers are found in one pass and each END is looked up by label.
 */
export function pemBlocks(text: string): RawBlock[] {
  const markers = [...text.matchAll(MARKER)].map((m) => ({ begin: m[1] === 'BEGIN', label: m[2]!, at: m.index!, after: m.index! + m[0].length }));
  // Each label's END markers in order, and how far the search among them has gone.
  const ends = new Map<string, number[]>();
  markers.forEach((m, i) => { if (!m.begin) (ends.get(m.label) ?? ends.set(m.label, []).get(m.label)!).push(i); });
  const next = new Map<string, number>();
  const blocks: RawBlock[] = [];
  for (let i = 0; i < markers.length; i++) {
    const m = markers[i]!;
    if (!m.begin) continue;
    const list = ends.get(m.label) ?? [];
    let k = next.get(m.label) ?? 0;
    while (k < list.length && list[k]! < i) k++;
    next.set(m.label, k);
    if (k === list.length) continue;
    const end = markers[list[k]!]!;
    blocks.push({ label: m.label, body: text.slice(m.after, end.at), text: text.slice(m.at, end.after) });
    i = list[k]!;
  }
  return blocks;
}

export function splitPem(text: string): PemBlock[] {
  const blocks: PemBlock[] = [];
  for (const block of pemBlocks(text.replace(/\r\n?/g, '\n'))) {
    const type = block.label;
    const lines = block.body.split('\n').map((l) => l.trim()).filter((l) => l !== '');
    // Legacy encrypted keys carry "Proc-Type:" and "DEK-Info:" headers, then a blank line.
    const headers = lines.filter((l) => l.includes(':'));
    const base64 = lines.filter((l) => !l.includes(':')).join('');
    const wrapped = base64.match(/.{1,64}/g) ?? [];
    const head = headers.length > 0 ? [...headers, ''] : [];
    blocks.push({ type, pem: [`-----BEGIN ${type}-----`, ...head, ...wrapped, `-----END ${type}-----`, ''].join('\n') });
  }
  return blocks;
}

const isKeyBlock = (b: PemBlock): boolean => b.type.endsWith('PRIVATE KEY');

/** Whether the text holds any private key block, encrypted or not. */
export function hasPrivateKey(text: string): boolean {
  return splitPem(text).some(isKeyBlock);
}

/** The first value of an attribute in node's distinguished name text (`C=US\nO=Acme\, Inc\nCN=R3`). */
function attribute(dn: string, key: string): string | undefined {
  for (const line of dn.split('\n')) {
    if (line.startsWith(`${key}=`)) return line.slice(key.length + 1).replace(/\\(.)/g, '$1');
  }
  return undefined;
}

/** A distinguished name as a person reads it: the common name, with the organisation when it adds something. */
export function readableName(dn: string): string {
  const cn = attribute(dn, 'CN');
  const org = attribute(dn, 'O');
  if (cn && org && !cn.includes(org)) return `${cn} (${org})`;
  return cn ?? org ?? dn.split('\n').join(', ');
}

/**
 * Entries of node's subjectAltName text (since node 17 an entry with a comma or quote is
 * JSON-quoted), and whether it had any. A DNS entry no client would match it to (`*`, `*.com`,
 * `a*.example.com`, `*.*.example.com`, `x_y.example.com`) is carried by nobody: it is left out
 * rather than let it answer names, take them from other certificates or redirect to them.
 */
function altNames(x509: X509Certificate): { names: string[]; any: boolean } {
  const names: string[] = [];
  let any = false;
  const entry = /(DNS|IP Address):("(?:[^"\\]|\\.)*"|[^,]*)(?:, |$)/g;
  for (const m of (x509.subjectAltName ?? '').matchAll(entry)) {
    const raw = m[2] ?? '';
    const value = raw.startsWith('"') ? (JSON.parse(raw) as string) : raw;
    if (m[1] !== 'DNS' && !isIpAddress(value)) continue;
    any = true;
    const name = normaliseHost(value);
    if (certificateNameProblem(name) === null) names.push(name);
  }
  return { names: [...new Set(names)], any };
}

function certificateBlocks(text: string, field: string): PemBlock[] {
  const blocks = splitPem(text);
  const certs = blocks.filter((b) => b.type === 'CERTIFICATE');
  if (certs.length > 0) return certs;
  const other = blocks[0]?.type;
  const sentence = other === undefined
    ? 'No certificate found: the text holds no -----BEGIN CERTIFICATE----- block.'
    : other.includes('REQUEST')
      ? 'This is a signing request, not a certificate: send the certificate the authority returned.'
      : `No certificate found: the text holds a ${other} block, not a CERTIFICATE block.`;
  throw new GatewayError('tls.certificate-invalid', sentence, field);
}

/** Each CERTIFICATE block parsed, in order; refuses text with none or with one that is not X.509. */
export function parseCertificates(text: string, field = 'cert'): { block: PemBlock; x509: X509Certificate }[] {
  const blocks = certificateBlocks(text, field);
  return blocks.map((block, i) => {
    try {
      return { block, x509: new X509Certificate(block.pem) };
    } catch {
      const which = blocks.length === 1 ? 'The certificate' : `Certificate ${i + 1} of ${blocks.length}`;
      throw new GatewayError('tls.certificate-invalid', `${which} cannot be read: its block is not a valid X.509 certificate.`, field);
    }
  });
}

const seconds = (date: string): number => Math.floor(Date.parse(date) / 1000);

/** Whether the certificate names itself as issuer and its own key signs it. */
export function isSelfSigned(x509: X509Certificate): boolean {
  if (x509.subject !== x509.issuer) return false;
  try {
    return x509.verify(x509.publicKey);
  } catch {
    return false;
  }
}

/** The facts of a leaf (the first CERTIFICATE block) and the chain behind it. */
export function readCertificate(pem: string, field = 'cert'): CertInfo {
  const certs = parseCertificates(pem, field);
  const leaf = certs[0]!;
  const x509 = leaf.x509;
  const san = altNames(x509);
  // A CN that is no host name ("Acme Root CA") names nothing a handshake could ask for.
  const cn = attribute(x509.subject, 'CN');
  const cnName = cn !== undefined && certificateNameProblem(cn) === null ? [normaliseHost(cn)] : [];
  return {
    // With names in the SAN, the subject's CN names nothing (RFC 6125 section 6.4.4).
    names: san.any ? san.names : cnName,
    subject: readableName(x509.subject),
    issuer: readableName(x509.issuer),
    notBefore: seconds(x509.validFrom),
    notAfter: seconds(x509.validTo),
    fingerprint: x509.fingerprint256,
    selfSigned: isSelfSigned(x509),
    chainLength: certs.length,
    leafPem: leaf.block.pem,
    chainPem: certs.map((c) => c.block.pem).join(''),
  };
}

/** The one unencrypted private key of the text; refuses none, several, encrypted or unreadable. */
export function readPrivateKey(pem: string, field = 'key'): KeyObject {
  const keys = splitPem(pem).filter(isKeyBlock);
  const key = keys[0];
  if (key === undefined) {
    throw new GatewayError('tls.key-invalid', 'No private key found: the text holds no -----BEGIN PRIVATE KEY----- block.', field);
  }
  if (keys.length > 1) {
    throw new GatewayError('tls.key-invalid', `The text holds ${keys.length} private keys: give only the one that belongs to the certificate.`, field);
  }
  if (key.type.startsWith('ENCRYPTED') || /^Proc-Type: *4, *ENCRYPTED/m.test(key.pem)) {
    throw new GatewayError('tls.key-invalid', 'The private key is protected by a passphrase: give the key without one (openssl pkey -in key.pem -out plain-key.pem).', field);
  }
  let read: KeyObject;
  try {
    read = createPrivateKey({ key: key.pem, format: 'pem' });
  } catch {
    throw new GatewayError('tls.key-invalid', `The private key cannot be read: its ${key.type} block is not a valid key.`, field);
  }
  const unfit = unfitForTls(read);
  if (unfit !== null) throw new GatewayError('tls.key-invalid', `${unfit} Use an RSA key of 2048 bits or more, an EC key on P-256, P-384 or P-521, or Ed25519.`, field);
  return read;
}

/** Curves clients offer in their handshakes; a key on another serves nobody. */
const TLS_CURVES = new Set(['prime256v1', 'secp384r1', 'secp521r1']);

/**
 * Why a key cannot serve a TLS handshake clients accept, or null: DSA signs in no TLS 1.3
 * handshake and in few 1.2 ones, a curve outside those clients offer is never chosen, and RSA
 * under 2048 bits is refused by current clients.
 */
function unfitForTls(key: KeyObject): string | null {
  const type = key.asymmetricKeyType;
  const details = key.asymmetricKeyDetails ?? {};
  if (type === 'rsa' || type === 'rsa-pss') {
    const bits = details.modulusLength ?? 0;
    return bits < 2048 ? `The RSA key has ${bits} bits: clients refuse fewer than 2048.` : null;
  }
  if (type === 'ec') {
    const curve = details.namedCurve ?? 'an unnamed curve';
    return TLS_CURVES.has(curve) ? null : `The EC key is on ${curve}, a curve TLS clients do not offer.`;
  }
  if (type === 'ed25519') return null;
  return `A ${type ?? 'key of unknown kind'} key cannot sign TLS handshakes clients accept.`;
}

/**
 * Whether the key is the one the leaf certificate was made for. Text that cannot be read is
 * refused as readCertificate and readPrivateKey refuse it.
 */
export function keyMatches(certPem: string, keyPem: string): boolean {
  const leaf = parseCertificates(certPem)[0]!.x509;
  return leaf.checkPrivateKey(readPrivateKey(keyPem));
}
