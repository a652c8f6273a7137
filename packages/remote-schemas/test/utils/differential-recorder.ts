import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordingProxy {
  /** The proxy's `/graphql` URL: give it to the registry instead of the remote's. */
  url: string;
  close(): Promise<void>;
}

/**
 * An HTTP proxy in front of a remote that writes `<name> start <query> <variables>` to `log` when an operation
 * arrives and `<name> end <query> <variables>` when the remote's answer goes back (introspection is not
 * logged). `delayMs` holds each operation before it is forwarded, so that calls that overlap in time
 * show up as overlapping in the log. Several proxies may share one log.
 */
export async function startRecordingProxy(target: string, name: string, log: string[], delayMs = 0): Promise<RecordingProxy> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      void (async () => {
        const body = Buffer.concat(chunks).toString('utf8');
        const params = JSON.parse(body) as { query?: unknown; variables?: unknown };
        const query = String(params.query ?? '').replace(/\s+/g, ' ').trim();
        const call = params.variables == null ? query : `${query} ${JSON.stringify(params.variables)}`;
        const logged = !query.includes('__schema');
        if (logged) {
          log.push(`${name} start ${call}`);
          await new Promise((resolve) => setTimeout(resolve, delayMs));
        }
        const answer = await fetch(target, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
        const text = await answer.text();
        // Logged before the answer leaves: a caller that waits for it can only start its next call later.
        if (logged) log.push(`${name} end ${call}`);
        res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' });
        res.end(text);
      })().catch((error: unknown) => {
        res.writeHead(502).end(String(error));
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/graphql`,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
