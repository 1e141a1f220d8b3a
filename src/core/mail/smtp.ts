/**
 * Sends plain-text mail through the server of GATEWAY_SMTP_URL (nodemailer's SMTP transport).
 * smtp:// starts plain and upgrades with STARTTLS when the server offers it; smtps:// speaks TLS
 * from the first byte. The server's certificate is always verified. Credentials come from the
 * URL; nodemailer's logger stays off, so the password is never written anywhere. One connection
 * per message: the gateway mails once a day, a pool would only hold a socket open.
 */
import nodemailer from 'nodemailer';
import type { NodemailerError } from 'nodemailer';
import { parseSmtpUrl, type SmtpTarget } from '../../settings/smtp-url.ts';

export interface MailMessage {
  readonly to: readonly string[];
  readonly subject: string;
  readonly text: string;
}

export interface Mailer {
  /** `host:port` of the mail server, for log lines. */
  readonly server: string;
  /** Resolves once the server took the mail for every recipient; otherwise rejects with a MailError. */
  send(message: MailMessage): Promise<void>;
}

export interface MailerOptions {
  /** Authorities to verify the server with, as node:tls `ca` (replaces the default list). */
  readonly ca?: string | readonly string[];
  /** Longest wait for the connection, the greeting, and each reply (default 30 s). */
  readonly timeoutMs?: number;
}

/** A mail the server did not take: the message is a sentence naming the server and the reason. */
export class MailError extends Error {
  override readonly name = 'MailError';
  constructor(readonly server: string, message: string, readonly code: string | undefined) {
    super(message);
  }
}

export function createMailer(url: string, from: string, options: MailerOptions = {}): Mailer {
  const target = parseSmtpUrl(url);
  if (typeof target === 'string') throw new Error(`The mail server URL ${target}.`);
  const timeout = options.timeoutMs ?? 30_000;
  const transport = nodemailer.createTransport({
    host: target.host,
    port: target.port,
    secure: target.secure,
    auth: target.user !== undefined ? { user: target.user, pass: target.password } : undefined,
    tls: options.ca !== undefined ? { ca: typeof options.ca === 'string' ? options.ca : [...options.ca] } : undefined,
    connectionTimeout: timeout,
    greetingTimeout: timeout,
    socketTimeout: timeout,
    logger: false,
    debug: false,
  });
  return {
    server: target.server,
    async send(message) {
      let rejected: string[];
      let accepted: string[];
      let reason: string | undefined;
      try {
        const info = await transport.sendMail({ from, to: [...message.to], subject: message.subject, text: message.text });
        rejected = info.rejected.map(String);
        accepted = info.accepted.map(String);
        reason = info.rejectedErrors?.[0]?.response;
      } catch (err) {
        throw mailError(target, err as NodemailerError);
      }
      if (rejected.length > 0) {
        throw new MailError(target.server, `The mail server ${target.server} refused ${recipients(rejected)}${reason ? ` (${clean(reason)})` : ''}; the mail went to ${listOf(accepted)}.`, 'EENVELOPE');
      }
    },
  };
}

function mailError(target: SmtpTarget, err: NodemailerError): MailError {
  const s = target.server;
  const reason = clean(err.rejectedErrors?.[0]?.response ?? err.response ?? err.message);
  // A refused certificate surfaces as a socket error; its own code (CERT_HAS_EXPIRED…) tells.
  const tls = err.code === 'ETLS' || /CERT|TLS|SSL|UNABLE_TO/.test(err.originalCode ?? '');
  const sentence = (() => {
    if (tls) return `The TLS connection to the mail server ${s} failed: ${reason}.`;
    switch (err.code) {
      case 'EAUTH':
        return `The mail server ${s} refused the sign-in of "${target.user ?? ''}": ${reason}.`;
      case 'EENVELOPE':
        return err.rejected && err.rejected.length > 0
          ? `The mail server ${s} refused ${recipients(err.rejected)}: ${reason}.`
          : `The mail server ${s} refused the mail: ${reason}.`;
      case 'ECONNECTION':
      case 'ESOCKET':
      case 'EDNS':
      case 'ETIMEDOUT':
        return `The mail server ${s} could not be reached: ${reason}.`;
      default:
        return `The mail server ${s} did not take the mail: ${reason}.`;
    }
  })();
  return new MailError(s, sentence, err.code);
}

function recipients(addresses: readonly string[]): string {
  return `${addresses.length === 1 ? 'the recipient' : 'the recipients'} ${addresses.join(', ')}`;
}

function listOf(addresses: readonly string[]): string {
  return addresses.length === 0 ? 'nobody' : addresses.join(', ');
}

/** A server reply or error message as part of a sentence: one line, no final period. */
function clean(text: string): string {
  return text.replace(/\s+/g, ' ').trim().replace(/[.\s]+$/, '');
}
