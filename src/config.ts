import { isIP } from 'node:net';
import { z } from 'zod';
import { OperatorError } from './core/operator-error.ts';

/**
 * The only reader of process.env. Every setting is parsed once, here, and frozen; a bad value stops
 * start-up with a message naming the variable.
 */
const optionalString = z.string().min(1).optional();

const durationSeconds = z.coerce.number().int().positive();

/** `1.2.3.4`, `1.2.3.4:5353`, `::1` or `[::1]:5353`: what `dns.Resolver#setServers` accepts (addresses, not names). */
function isDnsServer(entry: string): boolean {
  const bracketed = /^\[([^\]]+)\](?::(\d{1,5}))?$/.exec(entry);
  const v4 = /^([\d.]+)(?::(\d{1,5}))?$/.exec(entry);
  const [host, port] = bracketed ? [bracketed[1], bracketed[2]] : v4 ? [v4[1], v4[2]] : [entry, undefined];
  if (!host || isIP(host) === 0) return false;
  return port === undefined || (Number(port) >= 1 && Number(port) <= 65535);
}

/**
 * `CORS_ALLOWED_ORIGINS`: `*`, or exact origins (`https://app.example.com`, `http://localhost:5173`),
 * each as a browser sends it in `Origin` (scheme and host in lower case, no default port, no path).
 */
export type CorsOrigins = '*' | ReadonlySet<string>;

function parseCorsOrigins(value: string, ctx: z.RefinementCtx): CorsOrigins {
  const entries = value
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
  if (entries.includes('*')) {
    if (entries.length > 1) ctx.addIssue({ code: 'custom', message: '* allows every origin and cannot be listed with others' });
    return '*';
  }
  const origins = new Set<string>();
  for (const entry of entries) {
    const url = URL.parse(entry);
    const exact = url !== null && /^https?:$/.test(url.protocol) && url.origin === entry.replace(/\/$/, '');
    if (exact) origins.add(url.origin);
    else
      ctx.addIssue({
        code: 'custom',
        message: `${entry} is not an origin: write scheme://host[:port] in lower case, without a path or the default port`,
      });
  }
  return origins;
}

const configSchema = z.object({
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  HOST: z.string().min(1).default('0.0.0.0'),
  BASE_URL: z.url({ protocol: /^https?$/ }).optional(),
  DATA_DIR: z.string().min(1).default('.data'),
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// or postgresql:// URL')
    .optional(),
  REDIS_URL: z
    .string()
    .regex(/^rediss?:\/\//, 'must be a redis:// or rediss:// URL')
    .optional(),
  TRUST_PROXY: optionalString,
  /** Any value the operator chooses (a long random one is the safe choice; see README). */
  PLATFORM_API_TOKEN: z.string().min(1).max(500).optional(),
  /** Bearer token for `GET /metrics`; unset, the route does not exist. */
  METRICS_TOKEN: z.string().min(16, 'must be at least 16 characters').optional(),
  /** Browser origins that may call `/api/v1` (CORS); unset, none but the service's own. */
  CORS_ALLOWED_ORIGINS: z.string().transform(parseCorsOrigins).optional(),
  BOOTSTRAP_WORKSPACE_NAME: z.string().min(1).max(200).default('Default workspace'),
  BOOTSTRAP_OWNER_EMAIL: z.email().default('owner@example.com'),
  BOOTSTRAP_OWNER_PASSWORD: z.string().min(8).max(128).optional(),
  /** The first workspace's secret API key, as the operator chooses it (`sk_…` by convention). */
  BOOTSTRAP_API_KEY: z
    .string()
    .regex(/^[\x21-\x7e]{1,200}$/, 'must be 1 to 200 printable ASCII characters without spaces')
    .optional(),
  ACCESS_TOKEN_TTL: durationSeconds.default(15 * 60),
  REFRESH_TOKEN_TTL: durationSeconds.default(30 * 24 * 60 * 60),
  SMTP_URL: z
    .string()
    .regex(/^smtps?:\/\//, 'must be an smtp:// or smtps:// URL')
    .optional(),
  MAIL_FROM: z.string().min(3).default('Identity <no-reply@localhost>'),
  VAULT_MASTER_KEY: z
    .string()
    .refine((v) => Buffer.from(v, 'base64').length === 32, 'must be 32 bytes, base64-encoded')
    .optional(),
  /** Master keys rotated out: they still open what they sealed until `npm run cli -- keys rewrap` has run. */
  VAULT_MASTER_KEY_PREVIOUS: z
    .string()
    .refine(
      (v) => v.split(',').every((k) => Buffer.from(k.trim(), 'base64').length === 32),
      'must be comma-separated base64 keys of 32 bytes',
    )
    .optional(),
  /** DNS servers for custom-domain verification, comma-separated `host[:port]`; unset means the system's. */
  DNS_SERVERS: z
    .string()
    .transform((v) =>
      v
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean),
    )
    .refine((list) => list.length > 0 && list.every(isDnsServer), 'must be comma-separated IP addresses, each with an optional :port')
    .optional(),
  LOG_LEVEL: z.enum(['debug', 'info', 'warn', 'error', 'silent']).default('info'),
  /** Refuses new passwords found on a list of ~49,000 commonly used ones (off: the spec's rule is length only). */
  REJECT_COMMON_PASSWORDS: z
    .enum(['true', 'false', '1', '0'])
    .default('false')
    .transform((v) => v === 'true' || v === '1'),
  /** Lets webhooks reach loopback and private addresses (local development and tests only). */
  ALLOW_PRIVATE_WEBHOOK_TARGETS: z
    .enum(['true', 'false', '1', '0'])
    .default('false')
    .transform((v) => v === 'true' || v === '1'),
  /**
   * Lets the identity providers a workspace or an organization names (a generic OpenID provider, a
   * Microsoft tenant, GitHub Enterprise, an SSO connection) be reached at loopback and private
   * addresses (local development and tests only).
   */
  ALLOW_PRIVATE_IDP_TARGETS: z
    .enum(['true', 'false', '1', '0'])
    .default('false')
    .transform((v) => v === 'true' || v === '1'),
  /** Prefix of rate-limit keys in Redis; lets several deployments (or test runs) share one Redis. */
  RATE_LIMIT_PREFIX: z.string().min(1).default('rl'),
  /** Time one action may run at sign-in (top level and handler), milliseconds. */
  ACTION_TIMEOUT_MS: z.coerce.number().int().min(10).max(5000).default(100),
  /** Heap limit of one action run, MiB (isolated-vm's minimum is 8). */
  ACTION_MEMORY_MB: z.coerce.number().int().min(8).max(512).default(32),
});

type ParsedConfig = z.infer<typeof configSchema>;

export type Config = Readonly<
  ParsedConfig & {
    BASE_URL: string;
    /** The value handed to Express's `trust proxy` setting. */
    trustProxy: boolean | number | string;
    embeddedDatabase: boolean;
  }
>;

export class ConfigError extends OperatorError {
  override readonly name = 'ConfigError';
}

function parseTrustProxy(value: string | undefined): boolean | number | string {
  if (value === undefined || value === 'false') return false;
  if (value === 'true') return true;
  if (/^\d+$/.test(value)) return Number(value);
  return value;
}

/** Parses an environment (normally process.env). Empty strings count as unset. */
export function loadConfig(env: Record<string, string | undefined>): Config {
  const present = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const result = configSchema.safeParse(present);
  if (!result.success) {
    const lines = result.error.issues.map((issue) => `  ${issue.path.join('.')}: ${issue.message}`);
    throw new ConfigError(`Invalid configuration:\n${lines.join('\n')}`);
  }
  const parsed = result.data;
  return Object.freeze({
    ...parsed,
    BASE_URL: (parsed.BASE_URL ?? `http://localhost:${parsed.PORT}`).replace(/\/+$/, ''),
    trustProxy: parseTrustProxy(parsed.TRUST_PROXY),
    embeddedDatabase: parsed.DATABASE_URL === undefined,
  });
}
