// Messages between a benchmark and the server child it drives (over the Node IPC channel).

/** What a module started in a child must export: `start(options)`. */
export interface ChildModule {
  start(options: unknown): Promise<StartedServer>;
}

export interface StartedServer {
  /** Base URL, e.g. http://127.0.0.1:41234 */
  readonly url: string;
  /** Requests served so far, for servers that count them (the remotes: requests per operation). */
  requests?(): number;
  close(): Promise<void>;
}

export interface ProcessStats {
  readonly rss: number;
  readonly heapUsed: number;
  readonly heapTotal: number;
  readonly external: number;
  /** V8's heap spaces: committed (`space_size`) and used bytes of each, by name. */
  readonly spaces?: Readonly<Record<string, { readonly committed: number; readonly used: number }>>;
  /** process.cpuUsage() of the child, microseconds. */
  readonly cpuUser: number;
  readonly cpuSystem: number;
  /** `StartedServer.requests()` when the server counts its requests. */
  readonly requests?: number;
}

export type ParentRequest =
  | { readonly type: 'stats'; readonly gc: boolean }
  | { readonly type: 'heapSnapshot'; readonly path: string }
  | { readonly type: 'allocations'; readonly action: 'start' }
  | { readonly type: 'allocations'; readonly action: 'stop'; readonly path: string }
  | { readonly type: 'close' };

export type ParentMessage = ParentRequest & { readonly id: number };

export type ChildMessage =
  | { readonly type: 'ready'; readonly url: string }
  | { readonly type: 'failed'; readonly error: string }
  | { readonly id: number; readonly type: 'stats'; readonly stats: ProcessStats }
  | { readonly id: number; readonly type: 'heapSnapshot'; readonly path: string }
  | { readonly id: number; readonly type: 'allocations'; readonly path?: string }
  | { readonly id: number; readonly type: 'closed' };
