import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import type { TestApp } from './app.ts';

export interface ReceivedMail {
  to: string[];
  raw: string;
}

/** A real SMTP server on a free port that keeps what it receives, for SMTP_URL in tests. */
export class MailSink {
  readonly received: ReceivedMail[] = [];
  private readonly server: SMTPServer;
  url = '';

  constructor() {
    this.server = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS'],
      logger: false,
      onData: (stream, session, callback) => {
        let raw = '';
        stream.on('data', (chunk: Buffer) => (raw += chunk.toString()));
        stream.on('end', () => {
          this.received.push({ to: session.envelope.rcptTo.map((r) => r.address), raw });
          callback();
        });
      },
    });
  }

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    const { port } = this.server.server.address() as AddressInfo;
    this.url = `smtp://127.0.0.1:${port}`;
    return this.url;
  }

  stop(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  to(address: string): ReceivedMail[] {
    return this.received.filter((m) => m.to.includes(address));
  }

  /** Waits for the next mail to `address` beyond the `already` it had. */
  async waitFor(address: string, already = 0, timeoutMs = 8000): Promise<ReceivedMail> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const mails = this.to(address);
      if (mails.length > already) return mails[already] as ReceivedMail;
      if (Date.now() > deadline) throw new Error(`no mail to ${address} within ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

/**
 * How many mails the app has queued to `address` (as stored), sent or not. A mail is queued in the
 * transaction of the request that asks for it, so once the requests have answered this is every mail
 * they will ever send: a test that must see no second mail counts here, then lets the mailer run
 * (`deps.mailer.tick()`) and counts what arrived, instead of waiting a while for nothing.
 */
export async function queuedTo(app: TestApp, address: string): Promise<number> {
  const [row] = await app.deps.orm.em
    .fork()
    .execute<{ n: number }[]>('select count(*)::int as n from email_outbox where to_address = ?', [address]);
  return row?.n ?? 0;
}

/** The token of a `{base_url}/<page>?token=…` link in an email's text (quoted-printable undone). */
export function linkTokenIn(mail: ReceivedMail, page: string): { link: string; token: string } {
  const text = mail.raw.replace(/=\r?\n/g, '').replace(/=3D/g, '=');
  const link = new RegExp(`(https?://\\S+/${page}\\?token=[A-Za-z0-9_%-]+)`).exec(text)?.[1];
  if (!link) throw new Error(`no ${page} link in:\n${text}`);
  return { link, token: decodeURIComponent(new URL(link).searchParams.get('token') as string) };
}

/** The reset token in a reset email. */
export function resetTokenIn(mail: ReceivedMail): { link: string; token: string } {
  return linkTokenIn(mail, 'reset-password');
}

export interface DecodedMail {
  subject: string;
  text: string;
  html: string;
}

function decodeTransfer(body: string, encoding: string): string {
  if (encoding === 'base64') return Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('utf8');
  if (encoding === 'quoted-printable') {
    const bytes = body.replace(/=\r?\n/g, '').replace(/=([0-9A-Fa-f]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
    return Buffer.from(bytes, 'latin1').toString('utf8');
  }
  return body;
}

/** RFC 2047 encoded words (`=?UTF-8?Q?…?=`, `=?UTF-8?B?…?=`); whitespace between two of them is dropped. */
function decodeHeader(value: string): string {
  return value
    .replace(/\?=\s+=\?/g, '?==?')
    .replace(/=\?[^?]+\?([QqBb])\?([^?]*)\?=/g, (_, kind: string, text: string) =>
      kind.toUpperCase() === 'B'
        ? Buffer.from(text, 'base64').toString('utf8')
        : decodeTransfer(text.replace(/_/g, ' '), 'quoted-printable'),
    );
}

function splitHeaders(raw: string): { headers: Map<string, string>; body: string } {
  const at = raw.search(/\r?\n\r?\n/);
  const head = raw.slice(0, at).replace(/\r?\n[ \t]+/g, ' ');
  const headers = new Map<string, string>();
  for (const line of head.split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon > 0) headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
  }
  return { headers, body: raw.slice(at).replace(/^\r?\n\r?\n/, '') };
}

/** The subject and the decoded text and HTML parts of a received mail (nodemailer's multipart/alternative). */
export function decodeMail(mail: ReceivedMail): DecodedMail {
  const { headers, body } = splitHeaders(mail.raw);
  const out: DecodedMail = { subject: decodeHeader(headers.get('subject') ?? ''), text: '', html: '' };
  const boundary = /boundary="?([^";]+)"?/.exec(headers.get('content-type') ?? '')?.[1];
  const parts = boundary ? body.split(`--${boundary}`).slice(1, -1) : [mail.raw];
  for (const part of parts) {
    const { headers: h, body: content } = splitHeaders(part.replace(/^\r?\n/, ''));
    const decoded = decodeTransfer(content.replace(/\r?\n$/, ''), (h.get('content-transfer-encoding') ?? '7bit').toLowerCase());
    if ((h.get('content-type') ?? '').startsWith('text/plain')) out.text = decoded.replace(/\r\n/g, '\n');
    if ((h.get('content-type') ?? '').startsWith('text/html')) out.html = decoded.replace(/\r\n/g, '\n');
  }
  return out;
}
