// Server module: a remote GraphQL server from examples/sample-remotes, in its own child process.
// `url` is the remote's GraphQL endpoint (…/graphql).
import {
  startCommerceRemote,
  startDirectoryRemote,
  startGeneratedRemote,
  startSampleRemote,
  startSchemaServer,
  type RunningRemote,
} from '../../examples/sample-remotes/src/index.js';
import type { StartedServer } from './child-protocol.js';
import { tickerSchema } from './ticker-remote.js';

export type RemoteServerOptions =
  | { readonly kind: 'sample' }
  | { readonly kind: 'directory' }
  | { readonly kind: 'generated'; readonly types: number; readonly prefix: string }
  | { readonly kind: 'commerce'; readonly schema: 'orders' | 'users' | 'orgs' }
  // Its `requests()` counts the subscription events it sent (bench subscriptions).
  | { readonly kind: 'ticker' };

export async function start(raw: unknown): Promise<StartedServer> {
  const options = raw as RemoteServerOptions;
  const ticker = options.kind === 'ticker' ? tickerSchema() : undefined;
  const remote: RunningRemote =
    options.kind === 'ticker'
      ? await startSchemaServer(ticker!.schema)
      : options.kind === 'sample'
        ? await startSampleRemote()
        : options.kind === 'directory'
          ? await startDirectoryRemote()
          : options.kind === 'commerce'
            ? await startCommerceRemote(options.schema)
            : await startGeneratedRemote({ types: options.types, prefix: options.prefix });
  // The sample remotes keep every request they receive (for tests); under load that list would grow
  // by hundreds of thousands of entries and its GC cost would end up in the measurement. The count
  // of HTTP requests survives the trimming (bench proxy: requests per client operation).
  let trimmed = 0;
  const trim = setInterval(() => {
    trimmed += remote.received.length;
    remote.received.length = 0;
    remote.connections.length = 0;
    remote.subscribed.length = 0;
  }, 250);
  trim.unref();
  return {
    url: remote.url,
    requests: () => (ticker ? ticker.sent() : trimmed + remote.received.length),
    close: async () => {
      clearInterval(trim);
      await remote.close();
    },
  };
}
