/**
 * `meerkat start | migrate | token create …` (CONTRACT.md, "Running it"). Exit codes: 0 done,
 * 1 failure at run time, 64 usage error, 65 what was asked is refused (an unknown account, route
 * or role; a database that holds no gateway), 70 an actor could not start, 78 a setting refused.
 */
import { existsSync, writeSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { LogHub, errorAttrs } from './log/logger.ts';
import { loadSettings, SettingsError, type Settings } from './settings/settings.ts';
import { startGateway, type Gateway } from './gateway.ts';
import { ActorStartError } from './workers/supervisor.ts';
import type { Store } from './store/orm.ts';
import { TOKEN_KINDS, type TokenKind } from './core/tokens/kinds.ts';
import { GatewayError } from './http/errors.ts';
import { VERSION } from './version.ts';
import { SchemaNewerError } from './store/schema-guard.ts';
import { DatabaseRefusedError } from './store/database-refused.ts';
import { MIGRATION_NAMES } from './store/migrations/names.ts';

const USAGE = `usage:
  meerkat start                      run the gateway (settings from GATEWAY_* variables)
  meerkat migrate                    bring the database schema up to date
  meerkat token create --name NAME --kind admin|schedules [--account NAME] [--routes a,b] [--roles r1,r2] [--organisations o1,o2]
                                     mint a token and print it once
  meerkat version`;

class UsageError extends Error {}
/** The command was well formed but what it asks is refused (sysexits' EX_DATAERR): no usage text. */
class RefusedError extends Error {}

function settingsOrExit(): Settings {
  try {
    return loadSettings();
  } catch (err) {
    if (err instanceof SettingsError) {
      process.stderr.write(`meerkat: ${err.message}\n`);
      process.exit(78);
    }
    throw err;
  }
}

function showRootPassword(pw: string): void {
  process.stderr.write(
    `\nmeerkat: the account "root" was created with the password:\n\n    ${pw}\n\n` +
    'It is shown this once. Sign in to the console and change it, or set GATEWAY_ROOT_PASSWORD before the first start.\n\n');
}

async function start(): Promise<void> {
  const settings = settingsOrExit();
  // The gateway's LogShipper writes what the hub receives once the boot began (spec 1.4).
  const hub = new LogHub(settings.logLevel);
  const log = hub.logger();
  // Signals are taken before the boot so a SIGTERM during start-up still stops cleanly: the
  // gateway finishes starting (cleanup after a partial start is its own job), then stops.
  let signals = 0;
  let gateway: Promise<Gateway> | undefined;
  const stop = (signal: string) => {
    signals++;
    if (signals > 1) {
      // Said straight to standard error: the LogShipper's thread would not write it before the exit.
      writeSync(2, `meerkat: second ${signal}: exiting at once, without waiting for the requests in flight\n`);
      process.exit(1);
    }
    log.info('signal received', { signal });
    void (gateway ?? Promise.reject(new Error('not started')))
      .then((gw) => gw.stop())
      .then(() => process.exit(0), (err: unknown) => {
        // The gateway's log is closed by now: said straight on standard error.
        process.stderr.write(`meerkat: stop failed: ${errorAttrs(err).error as string}\n`);
        process.exit(1);
      });
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  gateway = startGateway(settings, {
    hub,
    onRootPassword: showRootPassword,
  });
  try {
    await gateway;
  } catch (err) {
    log.error('gateway could not start', errorAttrs(err));
    // The log may be JSON for a collector; the person at the terminal reads one sentence. An actor
    // that cannot start has its own code (sysexits' EX_SOFTWARE): the gateway's own parts did
    // not come up, which a process manager may treat apart from a bad setting (78).
    process.stderr.write(`meerkat: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(err instanceof ActorStartError ? 70 : err instanceof SettingsError ? 78 : 1);
  }
}

/**
 * Opens the store, migrated, for a one-off command. Imported on demand: `meerkat start` keeps the
 * ORM out of the main thread (the actors and the boot worker load it).
 */
async function withStore<T>(fn: (store: Store, applied: string[]) => Promise<T>, o: { existing?: boolean } = {}): Promise<T> {
  const settings = settingsOrExit();
  const { openStore, migrate, sqliteFile, holdsGateway } = await import('./store/orm.ts');
  // A command that works on a gateway's data (a token) is refused on a place that holds none,
  // rather than making one there: a data directory or a database named wrong says so.
  if (o.existing && settings.databaseUrl === undefined && !existsSync(sqliteFile(settings.dataDir))) {
    throw new RefusedError(`GATEWAY_DATA_DIR="${settings.dataDir}" holds no gateway (no database file): check the variable, or run meerkat migrate (or start) there first.`);
  }
  const store = await openStore({ dataDir: settings.dataDir, databaseUrl: settings.databaseUrl }, { migrations: true }).catch((err: unknown) => {
    // The database the URL names does not exist, or its role or password is refused.
    if (err instanceof DatabaseRefusedError) throw o.existing ? new RefusedError(err.message) : new SettingsError('GATEWAY_DATABASE_URL', err.message);
    throw err;
  });
  try {
    if (o.existing && !(await holdsGateway(store))) {
      throw new RefusedError(`${settings.databaseUrl === undefined ? `GATEWAY_DATA_DIR="${settings.dataDir}"` : 'GATEWAY_DATABASE_URL'} names a database that holds no gateway (no schema): check the variable, or run meerkat migrate (or start) there first; nothing was written there.`);
    }
    // A gateway serving this directory migrated it at its start: another build's migrations would
    // change the schema under it (docs/upgrade.md).
    if (settings.databaseUrl === undefined) {
      const { gatewayRuns } = await import('./store/data-dir-lock.ts');
      const pending = await gatewayRuns(settings.dataDir) ? await store.orm.getMigrator().getPendingMigrations() : [];
      if (pending.length > 0) {
        throw new RefusedError(`A gateway runs on GATEWAY_DATA_DIR="${settings.dataDir}", and this build would migrate its database under it (${pending.map((m) => m.name).join(', ')}): stop that gateway first; a newer build migrates when it starts.`);
      }
    }
    const applied = await migrate(store);
    // Root as the first start makes it, so that a deployment scripted as migrate, then mint a
    // token for root, works before the gateway ever ran.
    const { ensureRoot } = await import('./core/accounts/root.ts');
    const { hashPassword } = await import('./workers/tasks/password.ts');
    const root = await ensureRoot(store, async (pw) => hashPassword(pw), settings.rootPassword, Date.now());
    if (root.generatedPassword !== undefined) showRootPassword(root.generatedPassword);
    return await fn(store, applied);
  } finally {
    await store.close();
  }
}

function list(value: string | undefined): string[] | undefined {
  return value === undefined ? undefined : value.split(',').map((s) => s.trim()).filter(Boolean);
}

async function tokenCreate(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      name: { type: 'string' }, kind: { type: 'string' }, account: { type: 'string' },
      routes: { type: 'string' }, roles: { type: 'string' }, organisations: { type: 'string' },
    },
    strict: true,
  });
  const name = values.name?.trim();
  if (!name || name.length > 200) throw new UsageError('--name is required (at most 200 characters)');
  const kind = values.kind as TokenKind | undefined;
  if (!kind || !(['admin', 'schedules'] as readonly string[]).includes(kind)) {
    throw new UsageError(`--kind must be admin or schedules (personal tokens are minted for an account in the console); kinds known: ${TOKEN_KINDS.join(', ')}`);
  }
  if (kind === 'admin' && (values.routes || values.roles || values.organisations)) throw new UsageError('--routes, --roles and --organisations are the perimeter of a schedules token; an admin token has none');
  const { createToken } = await import('./core/tokens/create.ts');
  const { insertEventsIn } = await import('./store/audit.ts');
  const { linesOf } = await import('./core/audit/lines.ts');
  const node = settingsOrExit().nodeName;
  const minted = await withStore(async (store) => {
    try {
      // The token and its audit line commit together, as a mint through the API does. Nobody
      // signed in: the line has no actor, and says it came from the command line.
      return await store.em().transactional(async (em) => {
        const request = {
          name, kind,
          account: kind === 'admin' ? values.account ?? 'root' : null,
          routes: kind === 'schedules' ? list(values.routes) ?? ['*'] : null,
          roles: kind === 'schedules' ? list(values.roles) ?? [] : null,
          organisations: kind === 'schedules' ? list(values.organisations) ?? [] : null,
        };
        const now = Date.now();
        const token = await createToken(em, request, now);
        await insertEventsIn(em, store.driver, linesOf([{
          action: 'token.create', target: { kind: 'token', id: token.id, name }, before: null,
          after: { name, kind, routes: request.routes, roles: request.roles, organisations: request.organisations }, detail: 'minted with the command line',
        }], null, now, node));
        return token;
      });
    } catch (err) {
      // The same refusals as the API, said for a command line.
      if (err instanceof GatewayError) throw new RefusedError(err.field ? `--${err.field}: ${err.detail}` : err.detail);
      throw err;
    }
  }, { existing: true });
  process.stderr.write(`meerkat: ${minted.kind} token "${minted.name}" created (id ${minted.id}); it is printed once:\n`);
  process.stdout.write(minted.token + '\n');
}

async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  // Asked for help anywhere (`meerkat start --help`): the usage, and nothing started.
  if (rest.includes('--help') || rest.includes('-h')) {
    process.stdout.write(USAGE + '\n');
    return;
  }
  switch (command) {
    case 'start':
    case undefined:
      if (rest.length > 0) throw new UsageError(`start takes no arguments (its settings are GATEWAY_* variables): ${rest.join(' ')}`);
      return start();
    case 'migrate': {
      if (rest.length > 0) throw new UsageError(`migrate takes no arguments: ${rest.join(' ')}`);
      const applied = await withStore(async (_store, applied) => applied);
      process.stderr.write(applied.length ? `meerkat: applied ${applied.join(', ')}\n` : 'meerkat: the schema is up to date\n');
      return;
    }
    case 'token':
      if (rest[0] !== 'create') throw new UsageError('the token command is: token create --name NAME --kind admin|schedules');
      return tokenCreate(rest.slice(1));
    case 'version':
    case '--version':
      // The schema tells builds of one version apart: a database migrated by a newer one is refused.
      process.stdout.write(`${VERSION} (schema ${MIGRATION_NAMES.at(-1)})\n`);
      return;
    case 'help':
    case '--help':
    case '-h':
      process.stdout.write(USAGE + '\n');
      return;
    default:
      throw new UsageError(`unknown command "${command}"`);
  }
}

main(process.argv.slice(2)).catch((err: unknown) => {
  if (err instanceof UsageError || (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
    process.stderr.write(`meerkat: ${(err as Error).message}\n${USAGE}\n`);
    process.exit(64);
  }
  if (err instanceof RefusedError || err instanceof SchemaNewerError) {
    process.stderr.write(`meerkat: ${err.message}\n`);
    process.exit(65);
  }
  if (err instanceof SettingsError) {
    process.stderr.write(`meerkat: ${err.message}\n`);
    process.exit(78);
  }
  process.stderr.write(`meerkat: ${(err as Error).message ?? String(err)}\n`);
  process.exit(1);
});
