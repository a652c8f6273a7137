import { mkdtempSync, rmSync } from 'node:fs';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseCommandLine, USAGE } from '../src/cli/command-line.js';
import { createServer, ServerOptionError, SETTINGS, type ServerOptions } from '../src/index.js';
import { defaultOf, FLAG_SETTING_NAMES, flagSettingOf, SETTING_NAMES } from '../src/settings.js';

const dir = mkdtempSync(join(tmpdir(), 'svc-graphql-settings-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const quiet = { debug() {}, info() {}, warn() {}, error() {} };

function serveConfig(argv: string[], env: NodeJS.ProcessEnv = {}) {
  const parsed = parseCommandLine(argv, env);
  if (parsed.command !== 'serve') throw new Error(`expected serve, got ${parsed.command}`);
  return parsed.config;
}

describe('the settings table', () => {
  it('gives every setting a flag and a variable of the documented form, none twice', () => {
    const flags = FLAG_SETTING_NAMES.map((name) => flagSettingOf(name).flag);
    const variables = FLAG_SETTING_NAMES.map((name) => flagSettingOf(name).env);
    expect(flags.length).toBeGreaterThan(10);
    expect(new Set(flags).size).toBe(flags.length);
    expect(new Set(variables).size).toBe(variables.length);
    for (const name of FLAG_SETTING_NAMES) {
      const { flag, env } = flagSettingOf(name);
      // `SVC_GRAPHQL_` and the flag's name in upper snake case (configuration.md says so).
      expect(env, name).toBe(`SVC_GRAPHQL_${flag.slice(2).replace(/-/g, '_').toUpperCase()}`);
    }
  });

  it('is what the CLI reads: each setting from its flag and from its variable, with the flag winning', () => {
    for (const name of FLAG_SETTING_NAMES) {
      const { flag, env } = flagSettingOf(name);
      const fallback = defaultOf(name);
      if (fallback === undefined) continue;
      const text = String(fallback);
      expect(serveConfig(['serve', `${flag}=${text}`]), flag).toMatchObject({ [name]: fallback, sources: { [name]: flag } });
      expect(serveConfig(['serve'], { [env]: text }), env).toMatchObject({ [name]: fallback, sources: { [name]: env } });
    }
    const defaults = serveConfig(['serve']);
    for (const name of SETTING_NAMES) expect(defaults[name], name).toEqual(defaultOf(name));
    expect(defaults.sources).toEqual({});
  });

  it('is what --help prints: one line per setting with its variable and its default', () => {
    for (const name of FLAG_SETTING_NAMES) {
      const { flag, env } = flagSettingOf(name);
      const fallback = defaultOf(name);
      const line = USAGE.split('\n').find((candidate) => candidate.trimStart().startsWith(`${flag} `) || candidate.trim() === flag);
      expect(line, flag).toBeDefined();
      expect(line).toContain(env);
      if (fallback !== undefined) expect(line).toContain(`(default ${String(fallback)}`);
    }
  });
});

describe('createServer option errors', () => {
  const attempt = (options: ServerOptions) =>
    createServer({ port: 0, databaseUrl: `file:${join(dir, 'never.json')}`, logger: quiet, ...options }).then(
      async (server) => {
        await server.close();
        throw new Error('expected the server not to start');
      },
      (error: unknown) => error,
    );

  it.each([
    [{ port: -1 }, 'port', 'expected a port number between 0 and 65535, but got -1'],
    [{ port: 70_000 }, 'port', 'expected a port number between 0 and 65535, but got 70000'],
    [{ maxQueryTokens: 0 }, 'maxQueryTokens', 'expected a positive whole number, but got 0'],
    [{ maxRequestBodySize: 1.5 }, 'maxRequestBodySize', 'expected a positive whole number, but got 1.5'],
    [{ logLevel: 'loud' as never }, 'logLevel', 'expected one of error, warn, info, debug, but got loud'],
    [{ corsDomain: 'example.com' }, 'corsDomain', '"example.com" is not an origin like https://app.example.com or https://*.example.com:8443'],
    [{ databaseUrl: 'mysql://user:hunter2@db/x' }, 'databaseUrl', 'expected file:PATH, postgres://… or postgresql://…, but got "mysql://user:***@db/x"'],
    [{ adminSecret: '' }, 'adminSecret', 'must not be empty'],
    [{ metricsSecret: '' }, 'metricsSecret', 'must not be empty'],
    [{ disableCors: 'yes' as never }, 'disableCors', 'expected true or false, but got yes'],
    [{ maxOperationsPerConnection: 0 }, 'maxOperationsPerConnection', 'expected a positive whole number, but got 0'],
    [{ shutdownTimeoutMs: -1 }, 'shutdownTimeoutMs', 'expected a whole number of at least 0, but got -1'],
    [{ adminSecret: 's', jwtSecret: { type: 'HS256', key: 'short' } }, 'jwtSecret', 'key: HS256 key must be at least 32 characters'],
  ] as const)('refuses %j with ERR_INVALID_OPTION naming %s', async (options, option, message) => {
    const error = await attempt(options as ServerOptions);
    expect(error).toBeInstanceOf(ServerOptionError);
    expect(error).toMatchObject({ code: 'ERR_INVALID_OPTION', option, message });
  });

  it('refuses JWT mode without an admin secret with ERR_OPTION_COMBINATION', async () => {
    const error = await attempt({ jwtSecret: { type: 'HS256', key: 'k'.repeat(32) } });
    expect(error).toBeInstanceOf(ServerOptionError);
    expect(error).toMatchObject({ code: 'ERR_OPTION_COMBINATION', option: 'jwtSecret' });
  });

  it('refuses a taken port with ERR_ADDRESS_IN_USE, after loading the store', async () => {
    const taken = createNetServer();
    await new Promise<void>((done) => taken.listen(0, '127.0.0.1', done));
    try {
      const error = await attempt({ port: (taken.address() as AddressInfo).port });
      expect(error).toMatchObject({ code: 'ERR_ADDRESS_IN_USE', option: 'port' });
    } finally {
      taken.close();
    }
  });

  it('refuses a store it cannot read with ERR_STORE_UNAVAILABLE', async () => {
    // A directory where the file store expects its file.
    const error = await attempt({ databaseUrl: `file:${dir}` });
    expect(error).toMatchObject({ code: 'ERR_STORE_UNAVAILABLE', option: 'databaseUrl' });
  });

  it('takes every setting of the table as an option, with the same defaults as the CLI', async () => {
    const options: Record<string, unknown> = {};
    for (const name of SETTING_NAMES) if (defaultOf(name) !== undefined) options[name] = defaultOf(name);
    const server = await createServer({ ...(options as ServerOptions), port: 0, databaseUrl: `file:${join(dir, 'defaults.json')}`, logger: quiet });
    try {
      expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
    } finally {
      await server.close();
    }
    expect(Object.keys(SETTINGS)).toEqual(SETTING_NAMES);
  });
});
