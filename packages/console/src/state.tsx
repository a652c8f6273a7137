import { createContext, useCallback, useContext, useEffect, useMemo, useRef, useState, type ReactNode } from 'react';
import { callMetadata, fetchVersion, type Answer, type ServerError } from './api/client.js';
import type { ConsistencyReport, InconsistentObject, MetadataDocument } from './metadata/types.js';

/** Where the admin secret the user gave is kept: this tab only, gone when it closes. */
const SECRET_KEY = 'svc-graphql-console.admin-secret';

/** Requests that change nothing: the document is not read again after them. */
const READS = new Set(['export_metadata', 'introspect_remote_schema', 'get_inconsistent_metadata']);

export type AuthStatus = 'checking' | 'signed-in' | 'needs-secret';

export interface ConsoleState {
  readonly auth: AuthStatus;
  /** Why the server refused the console (no secret, a wrong one, no admin role). */
  readonly authError: ServerError | undefined;
  /** The admin secret the console sends; undefined when it sends none (a server without one). */
  readonly secret: string | undefined;
  readonly version: string | undefined;
  readonly document: MetadataDocument | undefined;
  readonly resourceVersion: number | undefined;
  readonly inconsistent: readonly InconsistentObject[];
  /** The last failure to read the document, if the last read failed. */
  readonly loadError: ServerError | undefined;
  /** Tries a secret; on success it is kept for this tab. Answers the server's refusal, if any. */
  signIn(secret: string): Promise<ServerError | undefined>;
  /** Forgets the secret (this tab) and asks for it again. */
  signOut(): void;
  /** Reads the document and the inconsistent objects again. */
  refresh(): Promise<void>;
  /** One metadata request with the secret; a change is followed by a fresh read of the document. */
  metadata<T = unknown>(type: string, args: unknown, extra?: { version?: 1 | 2 }): Promise<Answer<T>>;
}

const Context = createContext<ConsoleState | undefined>(undefined);

export function useConsole(): ConsoleState {
  const state = useContext(Context);
  if (!state) throw new Error('useConsole() outside <ConsoleProvider>');
  return state;
}

function storedSecret(): string | undefined {
  try {
    return sessionStorage.getItem(SECRET_KEY) ?? undefined;
  } catch {
    return undefined;
  }
}

function keepSecret(secret: string | undefined): void {
  try {
    if (secret === undefined) sessionStorage.removeItem(SECRET_KEY);
    else sessionStorage.setItem(SECRET_KEY, secret);
  } catch {
    // Storage refused (private mode): the secret lives in memory until the page is left.
  }
}

interface Loaded {
  document: MetadataDocument;
  resourceVersion: number;
  inconsistent: InconsistentObject[];
}

async function load(secret: string | undefined): Promise<Answer<Loaded>> {
  const [exported, report] = await Promise.all([
    callMetadata<{ resource_version: number; metadata: MetadataDocument }>('export_metadata', {}, secret, { version: 2 }),
    callMetadata<ConsistencyReport>('get_inconsistent_metadata', {}, secret),
  ]);
  if (!exported.ok) return exported;
  if (!report.ok) return report;
  return {
    ok: true,
    status: exported.status,
    value: { document: exported.value.metadata, resourceVersion: exported.value.resource_version, inconsistent: report.value.inconsistent_objects ?? [] },
  };
}

function isAuthRefusal(error: ServerError): boolean {
  return error.status === 401 || (error.status === 403 && error.code === 'access-denied');
}

export function ConsoleProvider({ children }: { children: ReactNode }) {
  const [auth, setAuth] = useState<AuthStatus>('checking');
  const [authError, setAuthError] = useState<ServerError>();
  const [secret, setSecret] = useState<string | undefined>(storedSecret);
  const [version, setVersion] = useState<string>();
  const [loaded, setLoaded] = useState<Loaded>();
  const [loadError, setLoadError] = useState<ServerError>();
  const secretRef = useRef(secret);
  secretRef.current = secret;

  const apply = useCallback((answer: Answer<Loaded>) => {
    if (answer.ok) {
      setLoaded(answer.value);
      setLoadError(undefined);
      setAuth('signed-in');
      setAuthError(undefined);
    } else if (isAuthRefusal(answer.error)) {
      setAuth('needs-secret');
      setAuthError(answer.error);
    } else {
      setLoadError(answer.error);
      setAuth((current) => (current === 'checking' ? 'signed-in' : current));
    }
  }, []);

  const refresh = useCallback(async () => apply(await load(secretRef.current)), [apply]);

  useEffect(() => {
    void refresh();
    void fetchVersion().then((answer) => answer.ok && setVersion(answer.value.version));
  }, [refresh]);

  const signIn = useCallback(
    async (candidate: string) => {
      const answer = await load(candidate);
      if (!answer.ok) return answer.error;
      keepSecret(candidate);
      secretRef.current = candidate;
      setSecret(candidate);
      apply(answer);
      return undefined;
    },
    [apply],
  );

  const signOut = useCallback(() => {
    keepSecret(undefined);
    secretRef.current = undefined;
    setSecret(undefined);
    setLoaded(undefined);
    setAuth('needs-secret');
    setAuthError(undefined);
  }, []);

  const metadata = useCallback(
    async <T,>(type: string, args: unknown, extra?: { version?: 1 | 2 }): Promise<Answer<T>> => {
      const answer = await callMetadata<T>(type, args, secretRef.current, extra);
      // A refused secret (the server was given another one) sends the console back to sign-in.
      if (!READS.has(type) || (!answer.ok && isAuthRefusal(answer.error))) await refresh();
      return answer;
    },
    [refresh],
  );

  const value = useMemo<ConsoleState>(
    () => ({
      auth,
      authError,
      secret,
      version,
      document: loaded?.document,
      resourceVersion: loaded?.resourceVersion,
      inconsistent: loaded?.inconsistent ?? [],
      loadError,
      signIn,
      signOut,
      refresh,
      metadata,
    }),
    [auth, authError, secret, version, loaded, loadError, signIn, signOut, refresh, metadata],
  );
  return <Context.Provider value={value}>{children}</Context.Provider>;
}
