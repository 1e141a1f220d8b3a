/** Main-thread side of the boot worker (see worker.ts). */
import { siblingModule, spawnWorker } from '../spawn.ts';
import type { PrepareInput, PrepareReply, PrepareResult } from './messages.ts';
import { SchemaNewerError } from '../../store/schema-guard.ts';
import { DatabaseRefusedError } from '../../store/database-refused.ts';

/** Runs the boot worker to its end; rejects with its own sentence when the store cannot be prepared. */
export function prepareStore(input: PrepareInput): Promise<PrepareResult> {
  return new Promise((resolve, reject) => {
    const worker = spawnWorker(siblingModule(import.meta.url, './worker.ts'), { workerData: input });
    let reply: PrepareReply | undefined;
    worker.once('message', (m: PrepareReply) => { reply = m; });
    worker.once('error', reject);
    worker.once('exit', (code) => {
      if (reply?.ok) resolve(reply.result);
      else if (reply?.newer) reject(new SchemaNewerError(reply.message));
      else if (reply?.refused) reject(new DatabaseRefusedError(reply.message));
      else reject(new Error(reply ? reply.message : `the boot worker exited with code ${code} before preparing the store`));
    });
  });
}
