import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, connect } from 'node:net';

/**
 * A real `redis-server` of the test's own, on a free port, without persistence: started, killed
 * (as a crash: SIGKILL), paused (SIGSTOP: connected but silent) and started again on the same port.
 */
export interface TestRedis {
  readonly port: number;
  readonly url: string;
  start(): Promise<void>;
  kill(): Promise<void>;
  pause(): void;
  resume(): void;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address !== null ? address.port : 0));
    });
  });
}

function answersPing(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.setTimeout(500);
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once('data', (data) => {
      socket.destroy();
      resolve(data.toString().startsWith('+PONG'));
    });
    socket.once('error', () => resolve(false));
    socket.once('timeout', () => {
      socket.destroy();
      resolve(false);
    });
  });
}

export async function createTestRedis(port?: number): Promise<TestRedis> {
  const chosen = port ?? (await freePort());
  let child: ChildProcess | undefined;
  return {
    port: chosen,
    url: `redis://127.0.0.1:${String(chosen)}`,
    async start() {
      child = spawn('redis-server', ['--port', String(chosen), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
      child.once('error', () => undefined);
      for (let attempt = 0; attempt < 100; attempt++) {
        if (await answersPing(chosen)) return;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      throw new Error(`redis-server did not answer on port ${String(chosen)}`);
    },
    async kill() {
      const running = child;
      child = undefined;
      if (running === undefined || running.exitCode !== null) return;
      running.kill('SIGCONT');
      await new Promise<void>((resolve) => {
        running.once('exit', () => resolve());
        running.kill('SIGKILL');
      });
    },
    pause() {
      child?.kill('SIGSTOP');
    },
    resume() {
      child?.kill('SIGCONT');
    },
  };
}
