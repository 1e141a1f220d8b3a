import type { MigrationObject } from '@mikro-orm/core';
import { MIGRATION_NAMES } from './names.ts';
import { Migration0001 } from './0001-accounts-sessions-tokens.ts';
import { Migration0002 } from './0002-core-resources.ts';
import { Migration0003 } from './0003-session-scope.ts';
import { Migration0004 } from './0004-schedules.ts';
import { Migration0005 } from './0005-pending-turn.ts';
import { Migration0006 } from './0006-buckets-settings.ts';
import { Migration0007 } from './0007-changes-notify.ts';
import { Migration0008 } from './0008-schedule-stopped.ts';
import { Migration0009 } from './0009-audit.ts';
import { Migration0010 } from './0010-route-audit.ts';
import { Migration0011 } from './0011-tls.ts';
import { Migration0012 } from './0012-trusted-authorities.ts';
import { Migration0013 } from './0013-acme.ts';
import { Migration0014 } from './0014-metrics.ts';
import { Migration0015 } from './0015-token-organisations.ts';
import { Migration0016 } from './0016-signin-attempts.ts';
import { Migration0017 } from './0017-node-marks.ts';
import { Migration0018 } from './0018-audit-no-replace.ts';
import { Migration0019 } from './0019-audit-organisation-from.ts';
import { Migration0020 } from './0020-metrics-history.ts';
import { Migration0021 } from './0021-legacy-token-organisations.ts';


/** The classes in the order of MIGRATION_NAMES; each name starts with its class's number. */
const CLASSES = [
  Migration0001,
  Migration0002,
  Migration0003,
  Migration0004,
  Migration0005,
  Migration0006,
  Migration0007,
  Migration0008,
  Migration0009,
  Migration0010,
  Migration0011,
  Migration0012,
  Migration0013,
  Migration0014,
  Migration0015,
  Migration0016,
  Migration0017,
  Migration0018,
  Migration0019,
  Migration0020,
  Migration0021,
];

/** Every migration, in order. Listed explicitly so compiled and tsx runs find the same set. */
if (CLASSES.length !== MIGRATION_NAMES.length) throw new Error(`${CLASSES.length} migration classes for ${MIGRATION_NAMES.length} names`);
export const MIGRATIONS: MigrationObject[] = MIGRATION_NAMES.map((name, i) => {
  const cls = CLASSES[i];
  if (cls === undefined || cls.name !== `Migration${name.slice(0, 4)}`) throw new Error(`migration ${name} is not paired with its class`);
  return { name, class: cls };
});
