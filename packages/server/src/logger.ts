import type { LogLevel } from './config.js';

/** The logger shape Yoga, and every svc-graphql package, accepts. */
export interface Logger {
  debug(...args: unknown[]): void;
  info(...args: unknown[]): void;
  warn(...args: unknown[]): void;
  error(...args: unknown[]): void;
}

const RANK: Record<LogLevel, number> = { error: 0, warn: 1, info: 2, debug: 3 };

/**
 * One line per entry on stderr, `<ISO time> <level> <message>`, so stdout carries only what
 * scripts read (the listening line).
 */
export function createLogger(
  level: LogLevel,
  write: (line: string) => void = (line) => process.stderr.write(line),
): Logger {
  const emit = (entryLevel: LogLevel) => (...args: unknown[]) => {
    if (RANK[entryLevel] > RANK[level]) return;
    const text = args
      .map((arg) => (arg instanceof Error ? (arg.stack ?? arg.message) : typeof arg === 'string' ? arg : safeJson(arg)))
      .join(' ');
    write(`${new Date().toISOString()} ${entryLevel} ${text}\n`);
  };
  return { debug: emit('debug'), info: emit('info'), warn: emit('warn'), error: emit('error') };
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
