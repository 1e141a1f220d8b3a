/**
 * A request whose body could be framed two ways (RFC 9112 6.3): two lengths, a length that is not
 * a number, a coding other than chunked alone, or a length beside a coding. uWebSockets.js reads
 * such a request one way (the first length, any coding holding "chunked"); a proxy in front of
 * the gateway may read it another, and the bytes after the body would then be a request the
 * gateway never judged. The uWS door closes the connection without reading further (and without
 * an answer: see uws-door.ts). node:http, under the HTTPS doors, answers most such requests with
 * 400 itself; the HTTPS door cuts those it lets through.
 */

/** Why the request's framing is ambiguous, or undefined. `headers`: lower-case names, repeated values joined by ", ". */
export function framingProblem(headers: Readonly<Record<string, string>>): string | undefined {
  const length = headers['content-length'];
  const coding = headers['transfer-encoding'];
  if (length !== undefined && !/^[0-9]{1,15}$/.test(length)) return `Content-Length "${clip(length)}" is not one number`;
  if (coding === undefined) return undefined;
  if (length !== undefined) return 'it states both a Content-Length and a Transfer-Encoding';
  if (coding.toLowerCase() !== 'chunked') return `Transfer-Encoding "${clip(coding)}" is not "chunked" alone`;
  return undefined;
}

function clip(value: string): string {
  const printable = value.replace(/[^\x20-\x7e]/g, '?');
  return printable.length > 40 ? `${printable.slice(0, 40)}…` : printable;
}
