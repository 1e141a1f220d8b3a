/**
 * Reads the server name (SNI) and the application protocols (ALPN) a TLS client offers, from its
 * ClientHello as it arrives on the socket (RFC 8446 4.1.2, RFC 6066 3, RFC 7301 3.1), before any
 * TLS state exists. The HTTPS doors choose the certificate from it and start the handshake with
 * exactly that one: Node's SNICallback leaves the server's default certificate beside the chosen
 * one, and a client preferring the default's key type then gets the wrong certificate.
 */

export type Hello =
  | { readonly kind: 'more' }
  | { readonly kind: 'invalid'; readonly reason: string }
  | { readonly kind: 'hello'; readonly serverName: string | undefined; readonly protocols: readonly string[] };

/** A ClientHello larger than this is refused (real ones are a few kilobytes at most). */
export const MAX_HELLO_BYTES = 32 * 1024;
const HANDSHAKE = 0x16;
const CLIENT_HELLO = 0x01;
const EXT_SERVER_NAME = 0;
const EXT_ALPN = 16;

const MORE: Hello = { kind: 'more' };
const invalid = (reason: string): Hello => ({ kind: 'invalid', reason });

/** `data`: every byte received so far. `more` until the whole ClientHello is there. */
export function readClientHello(data: Buffer): Hello {
  if (data.length > 0 && data[0] !== HANDSHAKE) return invalid('not a TLS handshake (plain HTTP sent to an HTTPS port?)');
  // The handshake message may span records: gather their fragments.
  const parts: Buffer[] = [];
  let gathered = 0;
  let needed = -1;
  let at = 0;
  while (needed < 0 || gathered < needed) {
    if (data.length < at + 5) return data.length > MAX_HELLO_BYTES ? invalid('ClientHello too large') : MORE;
    if (data[at] !== HANDSHAKE) return invalid('the ClientHello is interrupted by another record');
    const length = data.readUInt16BE(at + 3);
    if (data.length < at + 5 + length) return at + 5 + length > MAX_HELLO_BYTES ? invalid('ClientHello too large') : MORE;
    parts.push(data.subarray(at + 5, at + 5 + length));
    gathered += length;
    at += 5 + length;
    if (needed < 0 && gathered >= 4) {
      const head = Buffer.concat(parts);
      if (head[0] !== CLIENT_HELLO) return invalid('the first handshake message is not a ClientHello');
      needed = 4 + head.readUIntBE(1, 3);
      if (needed > MAX_HELLO_BYTES) return invalid('ClientHello too large');
    }
  }
  try {
    return parseBody(Buffer.concat(parts).subarray(4, needed));
  } catch {
    return invalid('malformed ClientHello');
  }
}

function parseBody(b: Buffer): Hello {
  let p = 2 + 32; // legacy_version, random
  p += 1 + b.readUInt8(p); // legacy_session_id
  p += 2 + b.readUInt16BE(p); // cipher_suites
  p += 1 + b.readUInt8(p); // legacy_compression_methods
  let serverName: string | undefined;
  const protocols: string[] = [];
  if (p >= b.length) return { kind: 'hello', serverName, protocols };
  const end = p + 2 + b.readUInt16BE(p);
  if (end > b.length) throw new RangeError('extensions');
  p += 2;
  while (p + 4 <= end) {
    const type = b.readUInt16BE(p);
    const length = b.readUInt16BE(p + 2);
    const ext = b.subarray(p + 4, p + 4 + length);
    if (ext.length !== length) throw new RangeError('extension');
    if (type === EXT_SERVER_NAME) serverName = hostName(ext);
    else if (type === EXT_ALPN) protocols.push(...alpnList(ext));
    p += 4 + length;
  }
  return { kind: 'hello', serverName, protocols };
}

function hostName(ext: Buffer): string | undefined {
  let p = 2;
  const end = 2 + ext.readUInt16BE(0);
  while (p + 3 <= end) {
    const type = ext.readUInt8(p);
    const length = ext.readUInt16BE(p + 1);
    if (type === 0) return ext.subarray(p + 3, p + 3 + length).toString('latin1').toLowerCase();
    p += 3 + length;
  }
  return undefined;
}

function alpnList(ext: Buffer): string[] {
  const out: string[] = [];
  let p = 2;
  const end = 2 + ext.readUInt16BE(0);
  while (p < end) {
    const length = ext.readUInt8(p);
    out.push(ext.subarray(p + 1, p + 1 + length).toString('latin1'));
    p += 1 + length;
  }
  return out;
}
