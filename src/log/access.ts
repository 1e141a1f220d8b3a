/**
 * The access log's record as it travels from the main thread to the LogShipper (spec 1.4 rule 1,
 * 2.7): plain values only, built once per exchange from its request record when the answer
 * ended. The main thread builds it and hands it over; formatting and writing are the shipper's.
 */
import type { PlaneName } from '../settings/settings.ts';

/** How an exchange ended (spec 2.7). */
export type Outcome = 'ok' | 'refused' | 'rejected' | 'failed' | 'upstream-down';

export interface AccessEntry {
  /** Epoch ms the request arrived (the gateway's clock). */
  readonly at: number;
  readonly plane: PlaneName;
  readonly method: string;
  /** The path as asked, identifiers included, without the query string (it may carry a key). */
  readonly path: string;
  /** `GET /orders/{id}` when the route declares its endpoints, else null. */
  readonly endpoint: string | null;
  readonly route: string | null;
  readonly status: number;
  readonly ms: number;
  readonly outcome: Outcome;
  /** The account as authenticated by the gateway (`scheduler` for scheduled calls). */
  readonly user: string | null;
  /** The API token's name when a machine called. */
  readonly token: string | null;
  /** The client address as the gateway resolved it; null for the gateway's own scheduled calls. */
  readonly ip: string | null;
  readonly traceId: string | null;
  /** The schedule of a scheduled call. */
  readonly schedule: string | null;
}
