import { pino, type DestinationStream, type Logger } from 'pino';

/**
 * Structured logs. Secrets never reach them: credentials in headers are redacted, and no code logs a
 * webhook secret, a password or an API key (they are not in any logged object).
 */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  const options = {
    level,
    redact: {
      paths: ['req.headers.authorization', 'req.headers.cookie', 'res.headers["set-cookie"]', '*.secret', '*.password', '*.apiKey'],
      censor: '[redacted]',
    },
  };
  return destination ? pino(options, destination) : pino(options);
}

export type { Logger };
