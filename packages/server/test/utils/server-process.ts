import { execFileSync, spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository's root and the server's command line, as `pnpm start` runs it. */
export const ROOT = resolve(fileURLToPath(new URL('../../../..', import.meta.url)));
export const BIN = join(ROOT, 'packages/server/src/cli/bin.ts');

/**
 * Environment without any SVC_GRAPHQL_* or OTEL_* variable of the developer's shell, plus `extra`;
 * the test project's `SVC_GRAPHQL_DIRECT_LANE` is kept, so that the server's tests without the
 * direct lane run their processes without it too.
 */
export function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if ((!key.startsWith('SVC_GRAPHQL_') && !key.startsWith('OTEL_')) || key === 'SVC_GRAPHQL_DIRECT_LANE') env[key] = value;
  }
  return { ...env, ...extra };
}

export interface ServerProcess {
  readonly child: ChildProcessWithoutNullStreams;
  /** `http://host:port` as the server printed it. */
  readonly url: string;
  /** What the server wrote to standard output and standard error so far (its log is the latter). */
  stdout(): string;
  stderr(): string;
  /** Resolves with the exit code (or the signal's name) once the process has exited. */
  readonly exited: Promise<number | string | null>;
  stop(): Promise<void>;
}

/**
 * `svc-graphql <args>` in a child process (args usually start with `serve`, `--server-port 0`),
 * resolved once it printed the address it listens on. `openFiles`: from then on, the process's
 * open-file limit, soft and hard (`prlimit`; set once it listens, since loading the TypeScript
 * sources through tsx at start opens many files at once, which a built server does not).
 */
export async function startServerProcess(
  args: readonly string[],
  options: { env?: Record<string, string>; openFiles?: number } = {},
): Promise<ServerProcess> {
  const command = [process.execPath, '--import', 'tsx', BIN, ...args];
  const child = spawn(command[0]!, command.slice(1), { cwd: ROOT, env: cleanEnv(options.env) });
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | string | null>((done) => child.on('exit', (code, signal) => done(code ?? signal)));
  const url = await new Promise<string>((done, fail) => {
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      const match = /^svc-graphql listening on (http:\/\/\S+)$/m.exec(stdout);
      if (match) done(match[1] as string);
    });
    void exited.then((code) => fail(new Error(`svc-graphql exited with ${code} before listening: ${stderr}`)));
  });
  if (options.openFiles !== undefined) execFileSync('prlimit', ['--pid', String(child.pid), `--nofile=${options.openFiles}:${options.openFiles}`]);
  return {
    child,
    url,
    stdout: () => stdout,
    stderr: () => stderr,
    exited,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(killer);
    },
  };
}
