/**
 * The boot worker: brings the schema up to date and seeds root, then exits. It runs once per
 * start in a thread of its own so the main thread never loads the ORM, and the migrator's
 * memory is given back as soon as the schema is ready.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { migrate, openStore } from '../../store/orm.ts';
import { DatabaseRefusedError } from '../../store/database-refused.ts';
import { SchemaNewerError } from '../../store/schema-guard.ts';
import { ensureRoot } from '../../core/accounts/root.ts';
import { hashPassword } from '../tasks/password.ts';
import type { PrepareInput, PrepareReply } from './messages.ts';

async function prepare(input: PrepareInput): Promise<PrepareReply> {
  const store = await openStore(input.store, { migrations: true });
  try {
    const applied = await migrate(store);
    // One scrypt hash, once, on this thread: the task pool is not worth waking for it.
    const root = await ensureRoot(store, async (pw) => hashPassword(pw), input.rootPassword, input.now);
    return {
      ok: true,
      result: {
        applied, rootCreated: root.created,
        ...(root.generatedPassword !== undefined ? { generatedPassword: root.generatedPassword } : {}),
      },
    };
  } finally {
    await store.close();
  }
}

prepare(workerData as PrepareInput).then(
  (reply) => parentPort!.postMessage(reply),
  (err: unknown) => parentPort!.postMessage({
    ok: false, message: err instanceof Error ? err.message : String(err),
    ...(err instanceof SchemaNewerError ? { newer: true } : {}), ...(err instanceof DatabaseRefusedError ? { refused: true } : {}),
  } satisfies PrepareReply),
);
