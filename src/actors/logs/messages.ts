/**
 * LogShipper's protocol (spec 1.4). Records arrive from the main thread as one-way batches: the
 * operational log's (`log.app`) and the access log's (`log.access`). Access lines already made for
 * standard output arrive through shared memory instead (`lines`, a byte ring the main thread
 * writes chunks of lines into). The shipper formats and writes them, or pushes them to the
 * collector, in its own worker: the main thread never writes or ships on the request path.
 */
import type { LogFormat } from '../../settings/settings.ts';
import type { LogRecord } from '../../log/record.ts';
import type { AccessEntry } from '../../log/access.ts';
import type { ByteRingMemory } from '../../workers/byte-ring.ts';

import type { LogMode } from '../../core/logs/log-settings.ts';

export type { LogMode };

export type LogTells = {
  'log.app': LogRecord;
  'log.access': AccessEntry;
};

export interface ShipperState {
  readonly mode: LogMode;
  /** Collector batches dropped after three refusals since start (spec 1.4 rule 5). */
  readonly droppedBatches: number;
  /** Records lost since start inside the shipper: dropped batches' records, a full push queue, a stalled or closed output. */
  readonly droppedRecords: { readonly app: number; readonly access: number };
  /** Records waiting for the collector or for an output (the access lines in the shared ring included). */
  readonly queued: number;
}

export type LogCalls = {
  'output.set': { args: { mode: LogMode }; result: null };
  'state': { args: null; result: ShipperState };
  /** Resolves once what was told before is written, and the push was tried once (tests, stop). */
  'settle': { args: null; result: null };
};

export interface LogInit {
  readonly format: LogFormat;
  /** null: not known yet; records are held until `output.set` names it. */
  readonly mode: LogMode | null;
  /** Standard output and error by default; a test hands descriptors of its own. */
  readonly stdoutFd: number;
  readonly stderrFd: number;
  readonly node: string;
  readonly version: string;
  /** GATEWAY_OTLP_ENDPOINT, or null: the push mode needs it (and the licensed edition). */
  readonly otlpEndpoint: string | null;
  /**
   * Access lines for standard output, made on the main thread in the mode in force (startup format
   * or agent objects): written there only while this side is in that mode too. Kept across a
   * restart of the shipper: what the last one had not written is written by the next.
   */
  readonly lines: ByteRingMemory;
}
