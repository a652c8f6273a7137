export { createServer, ServerOptionError } from './server.js';
export type { ServerOptions, SvcGraphqlServer } from './server.js';
export { parseCommandLine, ConfigError, DEFAULT_DATABASE_URL } from './config.js';
export type { ServeConfig, LogLevel, CliCommand } from './config.js';
export { createLogger } from './logger.js';
export type { Logger } from './logger.js';
export { VERSION } from './version.js';
