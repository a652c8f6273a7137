import { SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { readBoundedText } from '@svc-graphql/bounded-body';
import { importJwk, type VerificationKey } from './keys.js';
import type { Logger } from './options.js';
import { nextRefreshDelay } from './refresh-schedule.js';

/** After a failed fetch: retry in 10 s, doubling up to 60 s. */
const RETRY_FIRST_MS = 10_000;
const RETRY_MAX_MS = 60_000;
/** An unknown `kid` may trigger a fetch only this long after the previous fetch of any kind. */
export const UNKNOWN_KID_COOLDOWN_MS = 10_000;
/** setTimeout cannot wait longer than this; longer delays are re-armed. */
const MAX_TIMER_MS = 2 ** 31 - 1;
/**
 * A key set is a few kilobytes; a larger answer is a misconfigured or hostile endpoint and fails
 * the fetch like an unreachable one, before more than this is held in memory.
 */
export const MAX_JWKS_BYTES = 1_048_576;

export interface RemoteKeySetOptions {
  url: URL;
  fetch: typeof fetch;
  timeoutMs: number;
  logger: Logger;
  /** Called when a fetch brings a key set that differs from the previous one. */
  onKeysChanged: () => void;
  /** Called once per fetch attempt with its outcome (not after `dispose()`). */
  onFetch?: (outcome: 'ok' | 'error') => void;
}

interface FetchedKeys {
  keys: VerificationKey[];
  fingerprint: string;
  headers: Headers;
}

/** Spans of this package go to the tracer the embedding app registered (a no-op without one). */
const tracer = trace.getTracer('@svc-graphql/jwt-session');

/** The URL without user, password, query or fragment: what logs and spans may show. */
export function redactedUrl(url: URL): string {
  const copy = new URL(url.href);
  copy.username = '';
  copy.password = '';
  copy.search = '';
  copy.hash = '';
  return copy.href;
}

/**
 * The keys published at `jwk_url`, kept fresh on the schedule of {@link nextRefreshDelay}. One fetch is
 * in flight at a time; a failed fetch keeps the last good keys. Holds a timer: call `dispose()`.
 */
export class RemoteKeySet {
  #keys: readonly VerificationKey[] = [];
  #fingerprint = '';
  #inFlight: Promise<void> | undefined;
  #abort: AbortController | undefined;
  #lastFetchAt = Number.NEGATIVE_INFINITY;
  /** Whether a fetch was ever made (the first one is "at start"). */
  #attempted = false;
  #failures = 0;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #disposed = false;
  readonly #options: RemoteKeySetOptions;
  readonly #shownUrl: string;
  /** Settles when the first fetch finished, successfully or not. */
  readonly ready: Promise<void>;

  constructor(options: RemoteKeySetOptions) {
    this.#options = options;
    this.#shownUrl = redactedUrl(options.url);
    this.ready = this.#refresh();
  }

  /** The current keys (possibly none, while the endpoint has never answered). */
  get keys(): readonly VerificationKey[] {
    return this.#keys;
  }

  /**
   * Keys that may verify a token with `kid`: by `kid` when the token has one, else all. When none
   * match, one refetch is made (waiting for it), at most once per 10 s since the last fetch.
   */
  async candidates(kid: string | undefined): Promise<readonly VerificationKey[]> {
    if (this.#keys.length === 0 && this.#inFlight !== undefined) await this.#inFlight;
    let found = this.#select(kid);
    if (found.length > 0 || this.#disposed) return found;
    if (this.#inFlight !== undefined) {
      await this.#inFlight;
    } else if (Date.now() - this.#lastFetchAt >= UNKNOWN_KID_COOLDOWN_MS) {
      await this.#refresh();
    } else {
      return found;
    }
    found = this.#select(kid);
    return found;
  }

  /** Stops the refresh timer and aborts a fetch in flight. */
  dispose(): void {
    this.#disposed = true;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#abort?.abort();
  }

  #select(kid: string | undefined): readonly VerificationKey[] {
    return kid === undefined ? this.#keys : this.#keys.filter((k) => k.kid === kid);
  }

  #schedule(delayMs: number | undefined): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    if (delayMs === undefined || this.#disposed) return;
    const due = Date.now() + delayMs;
    const arm = (): void => {
      const left = due - Date.now();
      this.#timer = setTimeout(
        () => {
          this.#timer = undefined;
          if (Date.now() < due) arm();
          else void this.#refresh();
        },
        Math.max(0, Math.min(left, MAX_TIMER_MS)),
      );
      // A key refresh must never keep the process alive.
      this.#timer.unref?.();
    };
    arm();
  }

  #refresh(): Promise<void> {
    if (this.#inFlight !== undefined) return this.#inFlight;
    if (this.#disposed) return Promise.resolve();
    this.#schedule(undefined);
    this.#lastFetchAt = Date.now();
    // "At start" is the first fetch made, not the first that succeeds: keys that arrive on a
    // retry after a failed start are refreshed like those of any later fetch.
    const atStart = !this.#attempted;
    this.#attempted = true;
    const run = this.#tracedFetch().then(
      ({ keys, fingerprint, headers }) => {
        if (this.#disposed) return;
        const changed = fingerprint !== this.#fingerprint;
        this.#keys = keys;
        this.#fingerprint = fingerprint;
        if (changed) this.#options.onKeysChanged();
        if (keys.length === 0) {
          // The endpoint answered a key set without a usable signing key: the keys it withdrew are
          // withdrawn here too (every token answers NoUsableKeys), and it is asked again as after a
          // failed fetch, not only when its caching headers say.
          this.#retryLater('answered a key set without a usable signing key; every token is refused until it has one');
          return;
        }
        this.#report('ok');
        this.#failures = 0;
        this.#schedule(nextRefreshDelay(headers, Date.now(), atStart));
      },
      (error: unknown) => {
        if (this.#disposed) return;
        this.#retryLater(`failed (${(error as Error).message}); keeping ${this.#keys.length} key(s)`);
      },
    );
    this.#inFlight = run.finally(() => {
      this.#inFlight = undefined;
    });
    return this.#inFlight;
  }

  /** A fetch that brought no usable key: reported as failed, and retried in 10 s, backing off to 60 s. */
  #retryLater(what: string): void {
    this.#report('error');
    this.#failures += 1;
    const retry = Math.min(RETRY_FIRST_MS * 2 ** (this.#failures - 1), RETRY_MAX_MS);
    this.#options.logger.warn(`jwt-session: fetching ${this.#shownUrl} ${what}, retrying in ${retry / 1000} s`);
    this.#schedule(retry);
  }

  #report(outcome: 'ok' | 'error'): void {
    try {
      this.#options.onFetch?.(outcome);
    } catch (error) {
      this.#options.logger.warn(`jwt-session: hooks.onJwksFetch threw: ${(error as Error)?.message ?? String(error)}`);
    }
  }

  /** One fetch in a `jwks.fetch` client span (`url.full` without credentials or query), status error on failure. */
  #tracedFetch(): Promise<FetchedKeys> {
    return tracer.startActiveSpan('jwks.fetch', { kind: SpanKind.CLIENT, attributes: { 'url.full': this.#shownUrl } }, (span) =>
      this.#fetchKeys().then(
        (result) => {
          span.end();
          return result;
        },
        (error: unknown) => {
          span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error)?.message ?? String(error) });
          span.end();
          throw error;
        },
      ),
    );
  }

  async #fetchKeys(): Promise<FetchedKeys> {
    const abort = new AbortController();
    this.#abort = abort;
    const timer = setTimeout(() => abort.abort(new Error(`timed out after ${this.#options.timeoutMs} ms`)), this.#options.timeoutMs);
    timer.unref?.();
    try {
      const response = await this.#options.fetch(this.#options.url, {
        headers: { accept: 'application/json' },
        // The keys come from the configured URL only: a redirect could hand key authority to
        // whatever the endpoint (or anyone who can spoof its answer) points at.
        redirect: 'manual',
        signal: abort.signal,
      });
      if (!response.ok) {
        await response.body?.cancel().catch(() => undefined);
        const redirect = response.type === 'opaqueredirect' || (response.status >= 300 && response.status < 400);
        throw new Error(redirect ? `HTTP ${response.status}: redirects are not followed` : `HTTP ${response.status}`);
      }
      const text = await readBoundedText(response, {
        maxBytes: MAX_JWKS_BYTES,
        tooLarge: (max) => new Error(`the response is larger than ${max} bytes`),
      });
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        throw new Error('the response is not JSON');
      }
      const { keys, fingerprint } = await importJwks(body, this.#options.logger);
      return { keys, fingerprint, headers: response.headers };
    } catch (error) {
      if (abort.signal.aborted && abort.signal.reason instanceof Error) throw abort.signal.reason;
      throw error;
    } finally {
      clearTimeout(timer);
      if (this.#abort === abort) this.#abort = undefined;
    }
  }
}

/** Imports the usable signature keys of a JWKS document with jose; keys we cannot use are skipped with a debug line. */
export async function importJwks(body: unknown, logger: Logger): Promise<{ keys: VerificationKey[]; fingerprint: string }> {
  const list = typeof body === 'object' && body !== null ? (body as Record<string, unknown>)['keys'] : undefined;
  if (!Array.isArray(list)) throw new Error('the response has no "keys" list');
  const keys: VerificationKey[] = [];
  const prints: string[] = [];
  for (const jwk of list) {
    try {
      const key = await importJwk(jwk);
      if (key === undefined) continue;
      keys.push(key.key);
      prints.push(key.print);
    } catch (error) {
      logger.debug(`jwt-session: skipping a JWK: ${(error as Error).message}`);
    }
  }
  return { keys, fingerprint: prints.sort().join('\n') };
}
