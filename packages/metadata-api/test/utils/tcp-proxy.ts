import { connect, createServer, type AddressInfo, type Socket } from 'node:net';

export interface TcpProxy {
  /** The proxy's port on 127.0.0.1. */
  readonly port: number;
  /** `connectionString` with its host and port replaced by the proxy's. */
  rewrite(connectionString: string): string;
  /** Like a network failure: every open connection is reset, and new ones are reset at once. */
  cut(): void;
  /**
   * Like a server that stopped answering: connections stay open (and new ones are accepted), but
   * nothing goes through them any more, either way.
   */
  hang(): void;
  /** Connections are accepted and forwarded again. */
  restore(): void;
  close(): Promise<void>;
}

/** A TCP proxy on 127.0.0.1 port 0 in front of `target`, which a test can cut and restore. */
export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const sockets = new Set<Socket>();
  let cut = false;
  let hung = false;
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    // A reset is what this proxy is for; the other side of the pair is destroyed below.
    socket.on('error', () => undefined);
  };
  const server = createServer((client) => {
    if (cut) {
      client.on('error', () => undefined);
      client.resetAndDestroy();
      return;
    }
    if (hung) {
      track(client);
      client.pause();
      return;
    }
    const upstream = connect(target.port, target.host);
    track(client);
    track(upstream);
    client.pipe(upstream);
    upstream.pipe(client);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const resetAll = () => {
    for (const socket of sockets) socket.resetAndDestroy();
  };
  return {
    port,
    rewrite(connectionString) {
      const url = new URL(connectionString);
      url.hostname = '127.0.0.1';
      url.port = String(port);
      return url.toString();
    },
    cut() {
      cut = true;
      resetAll();
    },
    hang() {
      hung = true;
      for (const socket of sockets) {
        socket.unpipe();
        socket.pause();
      }
    },
    restore() {
      cut = false;
      hung = false;
    },
    async close() {
      resetAll();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
