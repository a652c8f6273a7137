/**
 * Error codes of the metadata API. The HTTP status of each lives in one table below so
 * that handlers only decide *what* went wrong, never how it is answered.
 */
export type MetadataErrorCode =
  | 'access-denied'
  | 'already-exists'
  | 'conflict'
  | 'constraint-violation'
  | 'dependency-error'
  | 'invalid-configuration'
  | 'invalid-params'
  | 'not-exists'
  | 'parse-failed'
  | 'payload-too-large'
  | 'method-not-allowed'
  | 'remote-schema-error'
  | 'unexpected'
  | 'validation-failed';

const STATUS_BY_CODE: Record<MetadataErrorCode, number> = {
  'access-denied': 403,
  'already-exists': 400,
  conflict: 409,
  'constraint-violation': 400,
  'dependency-error': 400,
  'invalid-configuration': 400,
  'invalid-params': 400,
  'not-exists': 400,
  'parse-failed': 400,
  'payload-too-large': 413,
  'method-not-allowed': 405,
  'remote-schema-error': 400,
  unexpected: 400,
  'validation-failed': 400,
};

/** The wire shape of every metadata error: `{"error": M, "path": P, "code": C}`. */
export interface MetadataErrorBody {
  error: string;
  path: string;
  code: string;
}

/**
 * A refused metadata operation. `path` is the JSON path (`$.args.definition.url`) of the part of
 * the request that caused it, so a client can point at the offending field.
 */
export class MetadataApiError extends Error {
  override readonly name = 'MetadataApiError';
  readonly code: MetadataErrorCode;
  readonly path: string;
  readonly status: number;

  constructor(code: MetadataErrorCode, message: string, path = '$', options?: { status?: number; cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.path = path;
    this.status = options?.status ?? STATUS_BY_CODE[code];
  }

  /** The same error reported at another place, e.g. inside `bulk` (`$` becomes `$.args[2]`). */
  rebase(prefix: string): MetadataApiError {
    return new MetadataApiError(this.code, this.message, prefix + this.path.slice(1), { status: this.status });
  }

  toBody(): MetadataErrorBody {
    return { error: this.message, path: this.path, code: this.code };
  }
}

/** The store could not be read or written (unreadable or corrupt file, database failure). */
export class MetadataStoreError extends Error {
  override readonly name: string = 'MetadataStoreError';
  readonly code: string = 'ERR_METADATA_STORE';

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
  }
}

/**
 * The store's backend cannot be reached (connection refused or reset, a connection lost, no answer
 * in time). Unlike other store failures this one is expected to pass: the service answers 503
 * `the metadata store is unreachable` and keeps serving what it has.
 */
export class MetadataStoreUnreachableError extends MetadataStoreError {
  override readonly name = 'MetadataStoreUnreachableError';
  override readonly code = 'ERR_METADATA_STORE_UNREACHABLE';
}

/** Socket errors that mean "the other end is gone or cannot be reached", not "it said no". */
const NETWORK_ERROR_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'EHOSTDOWN',
  'ENETUNREACH',
  'ENETDOWN',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/** What node-postgres and pg-pool say when a connection is lost, cannot be made in time, or a query got no answer. */
const CONNECTION_LOST_MESSAGES = [
  'Connection terminated',
  'timeout expired',
  'timeout exceeded when trying to connect',
  'is not queryable',
  'Query read timeout',
];

/**
 * Whether a database failure means the database cannot be reached or cannot serve us in time, as
 * opposed to an answer about the request (a constraint, bad SQL). SQLSTATE class 08 is "connection
 * exception"; 57P01 to 57P03 are a server shutting down or still starting; 57014 is a statement
 * cancelled by `statement_timeout` and 55P03 a lock not had within `lock_timeout` (a database
 * stuck on a lock is as unusable for a write as one that is gone).
 */
export function isConnectionFailure(error: unknown): boolean {
  for (let current = error, depth = 0; typeof current === 'object' && current !== null && depth < 5; depth += 1) {
    const { code, message } = current as { code?: unknown; message?: unknown };
    if (typeof code === 'string' && (NETWORK_ERROR_CODES.has(code) || code.startsWith('08') || /^(57P0[123]|57014|55P03)$/.test(code))) {
      return true;
    }
    if (typeof message === 'string' && CONNECTION_LOST_MESSAGES.some((text) => message.includes(text))) return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}

/**
 * How a store failure is answered: 503 while the store is unreachable (nothing was changed; the
 * client may try again later), 500 with the store's own message otherwise (it names the file or
 * database, never a password, and only admins see it).
 */
export function storeFailure(error: MetadataStoreError): MetadataApiError {
  if (error instanceof MetadataStoreUnreachableError) {
    return new MetadataApiError('unexpected', 'the metadata store is unreachable', '$', { status: 503, cause: error });
  }
  return new MetadataApiError('unexpected', error.message, '$', { status: 500, cause: error });
}

/** `save()` was asked to replace a version that is no longer the stored one (another writer won). */
export class StoreConflictError extends Error {
  override readonly name = 'StoreConflictError';
  readonly code = 'ERR_METADATA_STORE_CONFLICT';
  readonly expectedResourceVersion: number;
  readonly actualResourceVersion: number;

  constructor(expectedResourceVersion: number, actualResourceVersion: number) {
    super(
      `metadata resource version ${String(expectedResourceVersion)} was expected in the store, but it holds ${String(actualResourceVersion)}`,
    );
    this.expectedResourceVersion = expectedResourceVersion;
    this.actualResourceVersion = actualResourceVersion;
  }
}
