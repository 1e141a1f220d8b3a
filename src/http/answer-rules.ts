/**
 * The HTTP rules every door applies to an answer, whichever server library carries it (the uWS
 * plain doors, the node:tls HTTPS doors): one place, so both kinds of door answer alike.
 */
import { STATUS_CODES } from 'node:http';
import type { OutgoingHeaders } from './exchange.ts';

/** 204 and 304 carry no body; a 204 announces no length either (RFC 9110 8.6, 15.3.5, 15.4.5). */
export const bodiless = (status: number): boolean => status === 204 || status === 304;

/** Made once per known status: every answer writes one. */
const STATUS_LINES: ReadonlyMap<number, string> = new Map(Object.entries(STATUS_CODES).map(([code, text]) => [Number(code), `${code} ${text}`]));

export function statusLine(status: number): string {
  return STATUS_LINES.get(status) ?? `${status} Unknown`;
}

/**
 * The length a HEAD answer announces: the GET's (RFC 9110 9.3.2), as the handler stated it in
 * `content-length`, or the length of the body it would have sent.
 */
export function headLength(headers: OutgoingHeaders, body: string | Uint8Array | undefined): number {
  const stated = headers['content-length'];
  const declared = Number(typeof stated === 'string' ? stated : body === undefined ? 0 : typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength);
  return Number.isFinite(declared) && declared >= 0 ? declared : 0;
}

/**
 * Headers a door writes itself and never takes from a handler: the length follows the body it
 * sends, and the Date is the door's own (a relayed one would make two).
 */
export function doorOwned(name: string, value: string | readonly string[]): boolean {
  return (name === 'content-length' && typeof value === 'string') || name === 'date';
}

/** While the gateway drains, every answer tells the client to take its next request elsewhere. */
export const CLOSING: OutgoingHeaders = Object.freeze({ connection: 'close' });
