import type { MigrationObject } from '@mikro-orm/core';
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

/** Every migration, in order. Listed explicitly so compiled and tsx runs find the same set. */
export const MIGRATIONS: MigrationObject[] = [
  { name: '0001-accounts-sessions-tokens', class: Migration0001 },
  { name: '0002-core-resources', class: Migration0002 },
  { name: '0003-session-scope', class: Migration0003 },
  { name: '0004-schedules', class: Migration0004 },
  { name: '0005-pending-turn', class: Migration0005 },
  { name: '0006-buckets-settings', class: Migration0006 },
  { name: '0007-changes-notify', class: Migration0007 },
  { name: '0008-schedule-stopped', class: Migration0008 },
  { name: '0009-audit', class: Migration0009 },
  { name: '0010-route-audit', class: Migration0010 },
  { name: '0011-tls', class: Migration0011 },
  { name: '0012-trusted-authorities', class: Migration0012 },
  { name: '0013-acme', class: Migration0013 },
  { name: '0014-metrics', class: Migration0014 },
  { name: '0015-token-organisations', class: Migration0015 },
  { name: '0016-signin-attempts', class: Migration0016 },
  { name: '0017-node-marks', class: Migration0017 },
  { name: '0018-audit-no-replace', class: Migration0018 },
  { name: '0019-audit-organisation-from', class: Migration0019 },
  { name: '0020-metrics-history', class: Migration0020 },
];
