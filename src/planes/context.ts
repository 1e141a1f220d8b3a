import type { Clock } from '../clock/clock.ts';
import type { Logger, LogHub } from '../log/logger.ts';
import type { Settings } from '../settings/settings.ts';
import type { ConfigClient } from '../actors/config/client.ts';
import type { SchedulesClient } from '../actors/schedules/client.ts';
import type { AuditClient } from '../actors/audit/client.ts';
import type { CertClient } from '../actors/certs/client.ts';
import type { Doors } from '../http/doors.ts';
import type { TlsDoorControl } from './tls-doors.ts';
import type { PlaneName } from '../settings/settings.ts';
import type { TaskPool } from '../workers/pool.ts';
import type { GatewayLogs } from './logging.ts';
import type { MetricsClient } from '../actors/metrics/client.ts';
import type { RequestRecords } from '../pipeline/request-record.ts';

export interface Readiness {
  readonly ready: boolean;
  /** `schema-newer`: a newer build upgraded the database; this node should be replaced by one. */
  readonly database: 'ok' | 'unreachable' | 'schema-newer';
  readonly actors: Readonly<Record<string, string>>;
}

/** What the plane handlers share: built once at boot by gateway.ts. */
export interface GatewayContext {
  readonly settings: Settings;
  readonly version: string;
  readonly hub: LogHub;
  readonly log: Logger;
  readonly clock: Clock;
  readonly config: ConfigClient;
  readonly schedules: SchedulesClient;
  /** The trail: `record` on the request path, the calls for its API. */
  readonly audit: AuditClient;
  /** The logs of this node: the shipper, the console buffer, the level, the access switch. */
  readonly logs: GatewayLogs;
  /** The traffic metrics: `record` on the request path, the calls and the intervals for the console. */
  readonly metrics: MetricsClient;
  /** The request records of every plane and of scheduled calls, and their observers. */
  readonly records: RequestRecords;
  /** The certificate store's handle and the view of what each plane presents. */
  readonly certs: CertClient;
  /** Every door of this node. */
  readonly doors: Doors;
  readonly tlsDoors: TlsDoorControl;
  /** The URL of a plane (`https://host:port` once its HTTPS door is open, else `http://…`): sentences name it, e.g. wrong-plane. */
  doorAddress(plane: PlaneName): string;
  readonly pool: TaskPool;
  /** True once SIGTERM (or stop()) began: probes say so and answers carry `connection: close`. */
  readonly draining: () => boolean;
  readiness(): Promise<Readiness>;
  /** Present only with GATEWAY_CLOCK=manual: moves the test clock on every thread. */
  readonly advanceClock?: (ms: number) => Promise<number>;
}
