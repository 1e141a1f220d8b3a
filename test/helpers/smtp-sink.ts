/**
 * A real SMTP server for tests (smtp-server on 127.0.0.1, port 0) that keeps every mail it takes.
 * Options: `tls` serves a certificate (STARTTLS on a plain port, or TLS from the first byte with
 * `implicit`); `users` asks for a sign-in with these passwords; `refuse` lists recipients answered
 * with 550.
 */
import { SMTPServer, type SMTPServerOptions } from 'smtp-server';
import type { AddressInfo } from 'node:net';
import { generateKeyPairSync } from 'node:crypto';
import forge from 'node-forge';

export interface ReceivedMail {
  readonly from: string;
  readonly to: string[];
  readonly user: string | undefined;
  /** The connection was encrypted (implicit TLS or STARTTLS). */
  readonly secure: boolean;
  readonly raw: string;
  readonly subject: string;
  readonly body: string;
}

export interface SmtpSink {
  readonly port: number;
  readonly mails: ReceivedMail[];
  close(): Promise<void>;
}

export interface SinkOptions {
  readonly tls?: { readonly key: string; readonly cert: string; readonly implicit?: boolean };
  readonly users?: Readonly<Record<string, string>>;
  readonly refuse?: readonly string[];
}

export async function startSmtpSink(o: SinkOptions = {}): Promise<SmtpSink> {
  const mails: ReceivedMail[] = [];
  const disabled = [...(o.tls ? [] : ['STARTTLS']), ...(o.users ? [] : ['AUTH'])];
  const options: SMTPServerOptions = {
    secure: o.tls?.implicit ?? false,
    ...(o.tls ? { key: o.tls.key, cert: o.tls.cert } : {}),
    disabledCommands: disabled,
    authOptional: o.users === undefined,
    allowInsecureAuth: true,
    logger: false,
    onAuth(auth, _session, callback) {
      if (o.users?.[auth.username ?? ''] === auth.password) callback(null, { user: auth.username });
      else callback(Object.assign(new Error('Authentication credentials invalid'), { responseCode: 535 }));
    },
    onRcptTo(address, _session, callback) {
      if (o.refuse?.includes(address.address)) callback(Object.assign(new Error('5.1.1 No such mailbox here'), { responseCode: 550 }));
      else callback();
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        const split = raw.indexOf('\r\n\r\n');
        const head = raw.slice(0, split).replace(/\r\n[ \t]+/g, ' ');
        mails.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((a) => a.address),
          user: session.user,
          secure: session.secure,
          raw,
          subject: /^subject: (.*)$/im.exec(head)?.[1] ?? '',
          body: raw.slice(split + 4).replace(/\r\n/g, '\n'),
        });
        callback();
      });
    },
  };
  const server = new SMTPServer(options);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (server.server.address() as AddressInfo).port;
  return { port, mails, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

/** A self-signed certificate for 127.0.0.1 and localhost: it is its own authority. */
export function selfSigned(): { key: string; cert: string } {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const keyPem = privateKey.export({ type: 'pkcs1', format: 'pem' }).toString();
  const cert = forge.pki.createCertificate();
  cert.publicKey = forge.pki.publicKeyFromPem(publicKey.export({ type: 'spki', format: 'pem' }).toString());
  cert.serialNumber = '01';
  cert.validity.notBefore = new Date(Date.now() - 60_000);
  cert.validity.notAfter = new Date(Date.now() + 86_400_000);
  const subject = [{ name: 'commonName', value: 'localhost' }];
  cert.setSubject(subject);
  cert.setIssuer(subject);
  cert.setExtensions([
    { name: 'basicConstraints', cA: true },
    { name: 'subjectAltName', altNames: [{ type: 2, value: 'localhost' }, { type: 7, ip: '127.0.0.1' }] },
  ]);
  cert.sign(forge.pki.privateKeyFromPem(keyPem), forge.md.sha256.create());
  return { key: keyPem, cert: forge.pki.certificateToPem(cert) };
}
