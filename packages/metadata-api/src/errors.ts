/**
 * Error codes of the metadata API (CONTRACT 5). The HTTP status of each lives in one table below so
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
  | 'not-supported'
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
  'not-supported': 400,
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
  override readonly name = 'MetadataStoreError';
  readonly code = 'ERR_METADATA_STORE';

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
  }
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
