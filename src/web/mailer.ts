import { createRequire } from 'node:module';

export interface Mailer {
  send(message: { to: string; subject: string; text: string; replyTo?: string }): Promise<void>;
}

/**
 * Sign-in mail and plan requests through nodemailer to SMTP_URL. With none set (the embedded default, one person
 * on their own machine) the message is printed on the server's standard error instead, so the
 * link can be followed; with SMTP_URL set no link is ever printed or logged.
 */
export function createMailer(options: {
  smtpUrl: string | undefined;
  from: string;
  print?: (text: string) => void;
}): Mailer {
  if (!options.smtpUrl) {
    const print = options.print ?? ((text: string) => process.stderr.write(text));
    return {
      async send({ to, subject, text, replyTo }) {
        print(
          `\n--- mail (SMTP_URL is not set, so it is printed here) ---\nTo: ${to}\n${replyTo ? `Reply-To: ${replyTo}\n` : ''}Subject: ${subject}\n\n${text}\n---\n`,
        );
      },
    };
  }
  // Loaded only when mail is sent through SMTP (its own build for require).
  const nodemailer = createRequire(import.meta.url)('nodemailer') as typeof import('nodemailer');
  const transport = nodemailer.createTransport(options.smtpUrl);
  return {
    async send({ to, subject, text, replyTo }) {
      await transport.sendMail({ from: options.from, to, subject, text, ...(replyTo ? { replyTo } : {}) });
    },
  };
}
