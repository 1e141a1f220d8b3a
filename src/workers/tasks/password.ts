/**
 * Password hashing with scrypt (memory-hard). Runs on the piscina pool: each hash holds 32 MiB
 * and ~100 ms of CPU, which must stay off the main thread and off libuv's four shared threads
 * (a burst of sign-ins would otherwise stall file and DNS work).
 */
import { randomBytes, scryptSync, timingSafeEqual } from 'node:crypto';

const N = 2 ** 15;
const R = 8;
const P = 1;
const KEYLEN = 32;
const MAXMEM = 64 * 1024 * 1024;

export function hashPassword(password: string): string {
  const salt = randomBytes(16);
  const hash = scryptSync(password, salt, KEYLEN, { N, r: R, p: P, maxmem: MAXMEM });
  return `scrypt$${N}$${R}$${P}$${salt.toString('base64url')}$${hash.toString('base64url')}`;
}

export function verifyPassword(input: { password: string; hash: string }): boolean {
  const parts = input.hash.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return false;
  const [, n, r, p, salt, expected] = parts as [string, string, string, string, string, string];
  const want = Buffer.from(expected, 'base64url');
  const got = scryptSync(input.password, Buffer.from(salt, 'base64url'), want.length, {
    N: Number(n), r: Number(r), p: Number(p), maxmem: MAXMEM,
  });
  return got.length === want.length && timingSafeEqual(got, want);
}

/** A hash that never matches, to spend the same time on an unknown name as on a known one. */
export const DECOY_HASH = `scrypt$${N}$${R}$${P}$${Buffer.alloc(16).toString('base64url')}$${Buffer.alloc(KEYLEN).toString('base64url')}`;

export type PasswordTask =
  | { readonly op: 'hash'; readonly password: string }
  | { readonly op: 'verify'; readonly password: string; readonly hash: string };

/** Piscina's entry: one function, dispatching on `op`. */
export default function run(task: PasswordTask): string | boolean {
  return task.op === 'hash' ? hashPassword(task.password) : verifyPassword(task);
}
