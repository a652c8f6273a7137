// Listening on 127.0.0.1 port 0 and closing cleanly, shared by the server modules of the benchmarks.
import { createServer, type RequestListener } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { StartedServer } from './child-protocol.js';

export async function listen(handler: RequestListener): Promise<StartedServer> {
  const server = createServer(handler);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
