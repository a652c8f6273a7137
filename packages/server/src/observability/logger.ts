import { pino, stdTimeFunctions, type Logger as PinoLogger } from 'pino';
import type { LogFormat, LogLevel } from '../settings.js';

/** The logger shape Yoga, and every svc-graphql package, accepts. */
export interface Logger {
  debug(...args: unknown[]): void;
  info(...args: unknown[]): void;
  warn(...args: unknown[]): void;
  error(...args: unknown[]): void;
}

/** Field values of a structured entry: never a token, a secret, a cookie or a variable's value. */
export type LogFields = Record<string, string | number | boolean | null>;

/** The server's own logger: the {@link Logger} lines plus structured entries (`http-log`, …). */
export interface ServerLogger extends Logger {
  /** Whether entries of `level` are written at all (callers skip building their fields otherwise). */
  enabled(level: LogLevel): boolean;
  /**
   * One entry of a given `type`: JSON has `type`, `msg` and the fields as properties; text shows
   * `<type> <msg> key=value …`.
   */
  entry(level: LogLevel, type: string, msg: string, fields: LogFields): void;
}

const RANK: Record<LogLevel, number> = { error: 0, warn: 1, info: 2, debug: 3 };

/** The `type` of entries written through the plain {@link Logger} methods. */
const SERVER_TYPE = 'server';

/**
 * Writes on stderr (or `write`), so stdout carries only what scripts read (the listening line).
 * `text`: one line per entry, `<ISO time> <level> <message>`; `json`: pino, one JSON object per
 * line with `level` (its name), `time` (ISO 8601), `type`, `msg` and the entry's fields.
 */
export function createLogger(
  level: LogLevel,
  write: (line: string) => void = (line) => process.stderr.write(line),
  format: LogFormat = 'text',
): ServerLogger {
  const enabled = (entryLevel: LogLevel) => RANK[entryLevel] <= RANK[level];
  if (format === 'json') return jsonLogger(level, write, enabled);
  const emit =
    (entryLevel: LogLevel) =>
    (...args: unknown[]) => {
      if (!enabled(entryLevel)) return;
      write(`${new Date().toISOString()} ${entryLevel} ${messageOf(args, true)}\n`);
    };
  return {
    ...byLevel(emit),
    enabled,
    entry(entryLevel, type, msg, fields) {
      if (!enabled(entryLevel)) return;
      let line = `${new Date().toISOString()} ${entryLevel} ${type}${msg === '' ? '' : ` ${msg}`}`;
      for (const [key, value] of Object.entries(fields)) line += ` ${key}=${textValue(value)}`;
      write(`${line}\n`);
    },
  };
}

/** The four level methods of a logger, each made by `emit`. */
function byLevel(emit: (level: LogLevel) => (...args: unknown[]) => void) {
  return { debug: emit('debug'), info: emit('info'), warn: emit('warn'), error: emit('error') };
}

function jsonLogger(level: LogLevel, write: (line: string) => void, enabled: (level: LogLevel) => boolean): ServerLogger {
  const logger: PinoLogger = pino(
    {
      level,
      // Neither pid nor hostname: the entry's own fields only.
      base: null,
      timestamp: stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
    },
    // A plain stream: written synchronously, so the CLI can hold start-up lines until it listens.
    { write },
  );
  const emit =
    (entryLevel: LogLevel) =>
    (...args: unknown[]) => {
      if (!enabled(entryLevel)) return;
      const error = args.find((arg): arg is Error => arg instanceof Error);
      const fields: Record<string, unknown> = { type: SERVER_TYPE };
      if (error) fields['error'] = { name: error.name, message: error.message, stack: error.stack };
      logger[entryLevel](fields, messageOf(args, false));
    };
  return {
    ...byLevel(emit),
    enabled,
    entry(entryLevel, type, msg, fields) {
      if (!enabled(entryLevel)) return;
      logger[entryLevel]({ type, ...fields }, msg);
    },
  };
}

/** The arguments of a plain log call as one message; an error as its stack (text) or `name: message`. */
function messageOf(args: readonly unknown[], stacks: boolean): string {
  let text = '';
  for (const arg of args) {
    const part =
      arg instanceof Error
        ? stacks
          ? (arg.stack ?? arg.message)
          : `${arg.name}: ${arg.message}`
        : typeof arg === 'string'
          ? arg
          : safeJson(arg);
    text = text === '' ? part : `${text} ${part}`;
  }
  return text;
}

/** A field's value in a text line: as it is when plain, quoted (JSON) when it holds spaces, `=`, quotes or control characters. */
function textValue(value: string | number | boolean | null): string {
  if (value === null) return '-';
  if (typeof value !== 'string') return String(value);
  return value !== '' && /^[\x21-\x7e]+$/.test(value) && !/["=\\]/.test(value) ? value : JSON.stringify(value);
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
