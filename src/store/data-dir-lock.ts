/**
 * One gateway per SQLite data directory. The embedded database is for one process: a second
 * gateway started on the same directory (a service manager and a shell, an overlapping restart
 * during an upgrade) would serve beside the first and could migrate the schema under it.
 *
 * A running gateway listens on a Unix socket in the directory (`meerkat.sock`). Another process
 * that cannot listen there connects: an answer means a gateway runs; a refused connection means
 * the file is left from a process that died, and it is replaced. The kernel ends the listener with
 * its process, so a crash never leaves the directory held. PostgreSQL deployments hold their node
 * name instead (node-name-lock.ts).
 */
import { mkdirSync, unlinkSync } from 'node:fs';
import { connect, createServer, type Server } from 'node:net';
import { join } from 'node:path';

/** Longest socket path the kernel takes (sun_path is 108 bytes with its terminator). */
const SOCKET_PATH_MAX = 107;

export class DataDirBusyError extends Error {
  override readonly name = 'DataDirBusyError';
}

export interface DataDirLock {
  release(): Promise<void>;
}

export function lockPath(dataDir: string): string {
  return join(dataDir, 'meerkat.sock');
}

/** Whether a gateway holds `dataDir` now (its socket answers). */
export function gatewayRuns(dataDir: string): Promise<boolean> {
  const path = lockPath(dataDir);
  if (Buffer.byteLength(path) > SOCKET_PATH_MAX) return Promise.resolve(false);
  return new Promise((resolve) => {
    const socket = connect(path);
    socket.once('connect', () => { socket.destroy(); resolve(true); });
    socket.once('error', () => resolve(false));
  });
}

function listen(server: Server, path: string): Promise<NodeJS.ErrnoException | null> {
  return new Promise((resolve) => {
    const failed = (err: NodeJS.ErrnoException) => resolve(err);
    server.once('error', failed);
    server.listen(path, () => { server.off('error', failed); resolve(null); });
  });
}

/**
 * Holds `dataDir` for this process, or throws DataDirBusyError when another gateway holds it.
 * When the directory cannot hold a socket (a path too long for one, a file system that refuses
 * them) the start goes on unguarded: `unguarded` says why, for the caller to log.
 */
export async function holdDataDir(dataDir: string): Promise<DataDirLock | { readonly unguarded: string }> {
  const path = lockPath(dataDir);
  if (Buffer.byteLength(path) > SOCKET_PATH_MAX) return { unguarded: `its path is longer than a socket's (${SOCKET_PATH_MAX} bytes)` };
  mkdirSync(dataDir, { recursive: true });
  // A connection is answered by closing it: the socket says "a gateway runs here" and nothing else.
  const server = createServer((socket) => socket.destroy());
  let err = await listen(server, path);
  if (err?.code === 'EADDRINUSE') {
    if (await gatewayRuns(dataDir)) {
      throw new DataDirBusyError(`Another gateway runs on the data directory ${dataDir}: the embedded database serves one process. Stop the other first, or run several nodes on PostgreSQL (GATEWAY_DATABASE_URL).`);
    }
    // Left by a process that died.
    try { unlinkSync(path); } catch { /* gone already */ }
    err = await listen(server, path);
  }
  if (err !== null) {
    server.close();
    return { unguarded: `a socket cannot be made there (${err.code ?? err.message})` };
  }
  server.unref();
  return {
    release: () => new Promise<void>((resolve) => {
      server.close(() => resolve());
      try { unlinkSync(path); } catch { /* gone already */ }
    }),
  };
}
