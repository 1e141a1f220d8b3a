/**
 * The migrations' names, in order, apart from their classes: what a database holds in its
 * migrations table, read without loading the migrator (`meerkat version`, the schema guard).
 */
export const MIGRATION_NAMES: readonly string[] = [
  '0001-accounts-sessions-tokens',
  '0002-core-resources',
  '0003-session-scope',
  '0004-schedules',
  '0005-pending-turn',
  '0006-buckets-settings',
  '0007-changes-notify',
  '0008-schedule-stopped',
  '0009-audit',
  '0010-route-audit',
  '0011-tls',
  '0012-trusted-authorities',
  '0013-acme',
  '0014-metrics',
  '0015-token-organisations',
  '0016-signin-attempts',
  '0017-node-marks',
  '0018-audit-no-replace',
  '0019-audit-organisation-from',
  '0020-metrics-history',
  '0021-legacy-token-organisations',
];
