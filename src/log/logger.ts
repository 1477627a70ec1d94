import winston from 'winston';

// Log lines carry identifiers and measurements only. Fields are allowlisted: anything else passed in
// `meta` is dropped, so a key, a prompt or a completion can never reach a log line by accident.
const ALLOWED_FIELDS = new Set([
  'requestId',
  // The W3C trace id of the request's span (tracing on).
  'traceId',
  'operationId',
  'method',
  'route',
  'status',
  'latencyMs',
  'orgId',
  'userId',
  'keyId',
  'runId',
  'agentId',
  'conversationId',
  'responseId',
  'model',
  'provider',
  'upstreamStatus',
  'attempt',
  'code',
  'errorName',
  'errorMessage',
  'stack',
  'component',
  'driver',
  'count',
  'port',
  'host',
  'pid',
  'jobId',
  'stepNumber',
  'reason',
  'durationMs',
  'signal',
  'plugin',
  'version',
  'path',
  // A hosted tool's egress profile: its name (the proxy URL it stands for is never logged).
  'profile',
]);

const allowlist = winston.format((info) => {
  for (const key of Object.keys(info)) {
    if (key === 'level' || key === 'message' || key === 'timestamp' || key === 'service') continue;
    if (!ALLOWED_FIELDS.has(key)) delete (info as Record<string, unknown>)[key];
  }
  return info;
});

export interface LoggerOptions {
  level?: string;
  /** Silence output (tests). */
  silent?: boolean;
  component?: string;
  /** Write the JSON lines here instead of stderr (tests read the access log). */
  stream?: NodeJS.WritableStream;
}

export function createLogger(options: LoggerOptions = {}): winston.Logger {
  return winston.createLogger({
    level: options.level ?? 'info',
    silent: options.silent ?? process.env['LOG_SILENT'] === '1',
    defaultMeta: options.component ? { component: options.component } : {},
    format: winston.format.combine(allowlist(), winston.format.timestamp(), winston.format.json()),
    // Logs go to stderr: stdout is reserved for what a command prints (keys, documents).
    transports: [
      options.stream
        ? new winston.transports.Stream({ stream: options.stream })
        : new winston.transports.Console({ stderrLevels: ['error', 'warn', 'info', 'http', 'verbose', 'debug', 'silly'] }),
    ],
  });
}

/** Log fields describing an error without its payload. */
export function errorFields(err: unknown): Record<string, unknown> {
  if (err instanceof Error) return { errorName: err.name, errorMessage: err.message, stack: err.stack };
  return { errorMessage: String(err) };
}
