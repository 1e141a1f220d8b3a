/**
 * A request whose body could be framed two ways (RFC 9112 6.3): two lengths, a length that is not
 * a number, a coding other than chunked alone, or a length beside a coding. uWebSockets.js reads
 * such a request one way (the first length, any coding holding "chunked"); a proxy in front of
 * the gateway may read it another, and the bytes after the body would then be a request the
 * gateway never judged. The uWS door closes the connection without reading further (and without
 * an answer: see uws-door.ts). node:http, under the HTTPS doors, answers most such requests with
 * 400 itself; the HTTPS door cuts those it lets through.
 */

/** `headers`: lower-case names, repeated values joined by ", ". */
export function isAmbiguousFraming(headers: Readonly<Record<string, string>>): boolean {
  const length = headers['content-length'];
  const coding = headers['transfer-encoding'];
  if (length !== undefined && !/^[0-9]{1,15}$/.test(length)) return true;
  if (coding === undefined) return false;
  return length !== undefined || coding.toLowerCase() !== 'chunked';
}
