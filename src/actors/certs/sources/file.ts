/**
 * From the file system (spec 1.2 rule 20): the runtime mounts a certificate and its key and
 * renews them; the gateway keeps only the two paths and the last certificate read, never the key,
 * and reads both again every 30 s. The mount listing offers the mounts that hold a certificate
 * with a private key beside it; a certificate without one cannot be picked.
 */
import { closeSync, constants, fstatSync, openSync, readFileSync, readSync, readdirSync, realpathSync, statSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, normalize, sep } from 'node:path';
import { GatewayError, invalidField } from '../../../http/errors.ts';
import { hasPrivateKey, readCertificate } from '../../../core/tls/pem.ts';
import { obtain, type Obtained } from './obtained.ts';

/** Never offered nor read: process pseudo-files, name resolution, the service-account token. */
const EXCLUDED = ['/proc', '/sys', '/dev', '/etc/hosts', '/etc/hostname', '/etc/resolv.conf', '/run/secrets/kubernetes.io/serviceaccount', '/var/run/secrets/kubernetes.io/serviceaccount'];

function within(path: string, root: string): boolean {
  return path === root || path.startsWith(root.endsWith(sep) ? root : root + sep);
}

/** Why a path may not be used, or null. `dataDir` is excluded too: the gateway's own files. */
export function excludedPath(path: string, dataDir: string): string | null {
  const p = normalize(path);
  for (const root of EXCLUDED) if (within(p, root)) return `${root} is excluded (process, name resolution and service-account files are never read as certificates)`;
  if (within(p, normalize(dataDir))) return 'the gateway\'s data directory is excluded';
  return null;
}

/** Where a path leads once its links are followed, or the path itself when nothing is there yet. */
function realPath(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

function checkedPath(value: unknown, field: string, dataDir: string): string {
  if (typeof value !== 'string' || !isAbsolute(value) || value.includes('\0')) throw invalidField(field, `${field} is an absolute path on the gateway's file system.`);
  // A link is judged by where it leads, as well as by its own name.
  for (const p of new Set([value, realPath(value)])) {
    const why = excludedPath(p, dataDir);
    if (why) throw invalidField(field, `${value} cannot be used: ${p === value ? '' : `it leads to ${p}, and `}${why}.`);
  }
  return normalize(value);
}

/** A certificate, its chain and its key fit in far less; a larger file is not one. */
export const FILE_MAX_BYTES = 256 * 1024;

/**
 * Reads a certificate or key file: a regular file of at most FILE_MAX_BYTES, wherever its links
 * lead but not into the excluded places. Opened without waiting, so a FIFO or a device put at the
 * path (or swapped in later) is refused instead of holding the actor until someone writes to it.
 */
function readText(path: string, field: string): string {
  const unreadable = (why: string) => new GatewayError('tls.file-unreadable', `${path} cannot be read (${why}).`, field);
  const real = realPath(path);
  for (const root of EXCLUDED) if (within(real, root)) throw unreadable(`it leads to ${real}, and ${root} is excluded`);
  let fd: number;
  try {
    fd = openSync(real, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw unreadable(code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'permission denied' : code ?? 'error');
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw unreadable('not a regular file');
    if (st.size > FILE_MAX_BYTES) throw unreadable(`larger than ${FILE_MAX_BYTES / 1024} KB`);
    const buf = Buffer.alloc(st.size);
    let read = 0;
    while (read < buf.length) {
      const n = readSync(fd, buf, read, buf.length - read, read);
      if (n === 0) break;
      read += n;
    }
    return buf.subarray(0, read).toString('utf8');
  } finally {
    closeSync(fd);
  }
}

export function checkFilePaths(certPath: unknown, keyPath: unknown, dataDir: string): { certPath: string; keyPath: string } {
  return { certPath: checkedPath(certPath, 'certPath', dataDir), keyPath: checkedPath(keyPath, 'keyPath', dataDir) };
}

/** Reads the pair as it is now on disk. */
export function readFilePair(certPath: string, keyPath: string): Obtained {
  return obtain(readText(certPath, 'certPath'), readText(keyPath, 'keyPath'), { cert: 'certPath', key: 'keyPath' });
}

export interface MountCandidate {
  readonly mount: string;
  readonly certPath: string;
  /** null: no private key beside the certificate, so it cannot be picked. */
  readonly keyPath: string | null;
  readonly names: readonly string[];
  readonly notAfter: number;
}

/** Mount points from the mount table (`/proc/self/mountinfo` field 5), the root excluded. */
function mountPoints(): string[] {
  let text = '';
  try {
    text = readFileSync('/proc/self/mountinfo', 'utf8');
  } catch {
    return [];
  }
  const points = new Set<string>();
  for (const line of text.split('\n')) {
    const point = line.split(' ')[4];
    // The mount table escapes spaces and the like as octal.
    if (point && point !== '/') points.add(point.replace(/\\(\d{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8))));
  }
  return [...points];
}

const KEY_NAMES = (cert: string): string[] => {
  const base = basename(cert).replace(/\.(crt|pem|cer)$/i, '');
  return ['tls.key', 'privkey.pem', 'key.pem', `${base}.key`, `${base}-key.pem`, `${base}.key.pem`];
};

/** Files at most two levels below a mount that hold a certificate, with the key found beside each. */
export function listMountCertificates(dataDir: string, limit = 200): MountCandidate[] {
  const out: MountCandidate[] = [];
  const visit = (dir: string, mount: string, depth: number): void => {
    let entries: string[];
    try {
      entries = readdirSync(dir);
    } catch {
      return;
    }
    for (const entry of entries) {
      if (out.length >= limit) return;
      const path = join(dir, entry);
      if (excludedPath(path, dataDir)) continue;
      let st;
      try {
        st = statSync(path);
      } catch {
        continue;
      }
      if (st.isDirectory()) {
        if (depth < 2) visit(path, mount, depth + 1);
        continue;
      }
      if (!st.isFile() || st.size > FILE_MAX_BYTES || !/\.(crt|pem|cer)$/i.test(entry)) continue;
      const candidate = certificateAt(path, mount);
      if (candidate) out.push(candidate);
    }
  };
  for (const mount of mountPoints()) if (!excludedPath(mount, dataDir)) visit(mount, mount, 0);
  return out;
}

function certificateAt(path: string, mount: string): MountCandidate | null {
  let text: string;
  try {
    text = readText(path, 'certPath');
  } catch {
    return null;
  }
  if (!text.includes('BEGIN CERTIFICATE') || hasPrivateKey(text)) return null;
  try {
    const info = readCertificate(text);
    const keyPath = KEY_NAMES(path).map((k) => join(dirname(path), k)).find((k) => {
      try {
        return hasPrivateKey(readText(k, 'keyPath'));
      } catch {
        return false;
      }
    }) ?? null;
    return { mount, certPath: path, keyPath, names: info.names, notAfter: info.notAfter };
  } catch {
    return null;
  }
}
