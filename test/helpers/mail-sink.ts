import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

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
