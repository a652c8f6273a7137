/**
 * Why a setting keeps the server from starting. Codes are for programs (branches, tests); the
 * message is for people. They are never sent to a client: a client's answers carry the codes of
 * docs/reference/errors.md.
 *
 * - `ERR_INVALID_OPTION`: the value cannot be used (its type, syntax or range; a JWT configuration
 *   jwt-session refuses; a database URL of an unknown kind).
 * - `ERR_OPTION_COMBINATION`: the value needs another setting that is not set (JWT mode without an
 *   admin secret).
 * - `ERR_ADDRESS_IN_USE`: the port is taken.
 * - `ERR_ADDRESS_UNAVAILABLE`: the host cannot be listened on.
 * - `ERR_STORE_UNAVAILABLE`: the metadata store cannot be opened or read at start.
 */
export type OptionErrorCode =
  | 'ERR_INVALID_OPTION'
  | 'ERR_OPTION_COMBINATION'
  | 'ERR_ADDRESS_IN_USE'
  | 'ERR_ADDRESS_UNAVAILABLE'
  | 'ERR_STORE_UNAVAILABLE';

/**
 * A problem with one option of `createServer` that keeps the server from starting, thrown before
 * anything listens. `option` is the option's name (`maxQueryTokens`); the CLI turns it into the
 * flag or environment variable the user set.
 */
export class ServerOptionError extends Error {
  override readonly name = 'ServerOptionError';
  constructor(
    readonly option: string,
    readonly code: OptionErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/**
 * What is wrong with a value, without saying whose it is: thrown by the readers of values
 * (`parseDatabaseUrl`, `parseCorsDomains`, the kinds of the settings table) and turned into a
 * {@link ServerOptionError} (an option) or a CLI `ConfigError` (a flag or variable) by the caller.
 */
export class InvalidValueError extends Error {
  override readonly name = 'InvalidValueError';
}

export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
