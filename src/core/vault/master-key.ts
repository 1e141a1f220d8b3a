import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from '../../log/logger.ts';

export class MasterKeyError extends Error {
  override readonly name = 'MasterKeyError';
}

/**
 * The vault master key: GATEWAY_VAULT_KEY, or `vault.key` in the data directory, created at first
 * start with mode 0600. Nodes of a cluster must share it (set GATEWAY_VAULT_KEY on each).
 */
export function loadMasterKey(given: Buffer | undefined, dataDir: string, clustered: boolean, log: Logger): Buffer {
  if (given) return given;
  const file = join(dataDir, 'vault.key');
  mkdirSync(dataDir, { recursive: true });
  let text: string | undefined;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw new MasterKeyError(`cannot read ${file}: ${(err as Error).message}`);
  }
  if (text === undefined) {
    const key = randomBytes(32);
    writeFileSync(file, key.toString('base64') + '\n', { mode: 0o600, flag: 'wx' });
    log.info('vault master key created', { file });
    if (clustered) log.warn('cluster mode without GATEWAY_VAULT_KEY: every node must have the same key to read sealed values', { file });
    return key;
  }
  const key = Buffer.from(text.trim(), 'base64');
  if (key.length !== 32) throw new MasterKeyError(`${file} does not hold a base64 32-byte key; restore it from backup or set GATEWAY_VAULT_KEY`);
  if ((statSync(file).mode & 0o077) !== 0) {
    chmodSync(file, 0o600);
    log.warn('vault.key was readable by others; its mode is now 0600', { file });
  }
  return key;
}
