/** Starts a real gateway in this process on port 0 with its own database. */
import { openSync } from 'node:fs';
import { LogHub, type LogRecord } from '../../src/log/logger.ts';
import type { LogOutputs } from '../../src/planes/logging.ts';
import { loadSettings } from '../../src/settings/settings.ts';
import { startGateway, type Gateway, type StartOptions } from '../../src/gateway.ts';
import { createTestDatabase, type TestDatabase } from './db.ts';

export const ROOT_PASSWORD = 'root-password-for-tests';

export interface TestGateway {
  readonly gw: Gateway;
  readonly db: TestDatabase;
  readonly logs: LogRecord[];
  url(plane: 'data' | 'control' | 'internal'): string;
  /** Stops the gateway and drops its database. */
  close(): Promise<void>;
}

export function loopbackEnv(extra: Record<string, string> = {}): Record<string, string> {
  return {
    GATEWAY_ADDR: '127.0.0.1:0',
    GATEWAY_ADMIN_ADDR: '127.0.0.1:0',
    GATEWAY_INTERNAL_ADDR: '127.0.0.1:0',
    GATEWAY_TLS_ADDR: '127.0.0.1:0',
    GATEWAY_ADMIN_TLS_ADDR: '127.0.0.1:0',
    GATEWAY_INTERNAL_TLS_ADDR: '127.0.0.1:0',
    GATEWAY_ROOT_PASSWORD: ROOT_PASSWORD,
    GATEWAY_LOG_LEVEL: 'debug',
    ...extra,
  };
}

let discard: number | undefined;

/**
 * Where an in-process gateway writes its logs unless a test reads them: nowhere (standard output
 * is the test runner's channel), or standard error with MEERKAT_TEST_LOGS.
 */
export function quietOutputs(): LogOutputs {
  if (process.env.MEERKAT_TEST_LOGS) return { stdoutFd: 2, stderrFd: 2 };
  discard ??= openSync('/dev/null', 'w');
  return { stdoutFd: discard, stderrFd: discard };
}

/** `start`: options beyond the log hub (an audit recorder whose lines the test reads, log outputs). */
export async function startTestGateway(env: Record<string, string> = {}, db?: TestDatabase, start: Omit<StartOptions, 'hub'> = {}): Promise<TestGateway> {
  const database = db ?? (await createTestDatabase());
  const settings = loadSettings(loopbackEnv({
    GATEWAY_DATA_DIR: database.dataDir,
    ...(database.databaseUrl ? { GATEWAY_DATABASE_URL: database.databaseUrl } : {}),
    ...env,
  }));
  const hub = new LogHub(settings.logLevel);
  const logs: LogRecord[] = [];
  hub.addSink((r) => logs.push(r));
  const gw = await startGateway(settings, { outputs: quietOutputs(), ...start, hub });
  return {
    gw,
    db: database,
    logs,
    url: (plane) => gw.url(plane),
    close: async () => {
      await gw.stop();
      if (!db) await database.drop();
    },
  };
}
