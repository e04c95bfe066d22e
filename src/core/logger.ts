import pino from 'pino';

/**
 * Structured JSON lines (pino). Callers log ids and codes, never tokens or passwords; redaction is the
 * second line of defence for a secret that slips into a field anyway.
 */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';

export type LogFields = Record<string, unknown>;

export interface Logger {
  debug(msg: string, fields?: LogFields): void;
  info(msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  error(msg: string, fields?: LogFields): void;
}

/** Field names that hold secrets, wherever they appear (top level and two levels down). */
const SECRET_FIELDS = [
  'password',
  'current_password',
  'new_password',
  'token',
  'access_token',
  'refresh_token',
  'id_token',
  'mfa_token',
  'code',
  'client_secret',
  'secret',
  'value',
  'authorization',
  'cookie',
  'set-cookie',
  'api_key',
];
export const REDACT_PATHS = SECRET_FIELDS.flatMap((f) => [`["${f}"]`, `*["${f}"]`, `*.*["${f}"]`]);

/**
 * The statement knex and MikroORM put in front of a database error's message (`update users set
 * password_hash = '$argon2id$…' where … - <PostgreSQL's message>`), values written in: a password
 * hash, an address, a token's digest would reach the log with any failed query.
 */
const QUERY_PREFIX = /^\s*(?:select|insert|update|delete|with|merge|call|copy)\b[\s\S]* - /i;

/** An error as logged: a database error's statement (and the values in it) left out, PostgreSQL's reason kept. */
function errorFields(error: Error): LogFields {
  if (!QUERY_PREFIX.test(error.message)) return { name: error.name, message: error.message, stack: error.stack };
  const message = `[query redacted] - ${error.message.replace(QUERY_PREFIX, '')}`;
  return { name: error.name, message, stack: error.stack?.split(error.message).join(message) };
}

function serialize(fields: LogFields): LogFields {
  const out: LogFields = {};
  for (const [key, value] of Object.entries(fields)) out[key] = value instanceof Error ? errorFields(value) : value;
  return out;
}

export function createLogger(level: LogLevel, write?: (line: string) => void): Logger {
  const options: pino.LoggerOptions = {
    level,
    base: undefined,
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
  };
  const base = write ? pino(options, { write }) : pino(options);
  return {
    debug: (msg, fields = {}) => base.debug(serialize(fields), msg),
    info: (msg, fields = {}) => base.info(serialize(fields), msg),
    warn: (msg, fields = {}) => base.warn(serialize(fields), msg),
    error: (msg, fields = {}) => base.error(serialize(fields), msg),
  };
}
