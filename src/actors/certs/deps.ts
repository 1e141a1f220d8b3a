/** What the CertActor's handlers share: the write seam, and what only certificates need. */
import type { WriteDeps } from '../write.ts';
import type { CertRecord } from './messages.ts';

/** What the certificate actor's ACME side offers its handlers. */
export interface AcmeDeps {
  /** Issuance runs on the licensed edition only. */
  readonly licensed: boolean;
  /** Asks the authority for this order in the background (deduplicated, one order at a time). */
  request(id: string): void;
}

export interface CertDeps extends WriteDeps {
  readonly dataDir: string;
  readonly internalNames: readonly string[];
  /** The record of a certificate as the last publish built it. */
  record(id: string): CertRecord | undefined;
  /** ACME orders: the edition and the background issuer; absent, orders are refused. */
  readonly acme?: AcmeDeps;
}
