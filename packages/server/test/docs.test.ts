import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type SvcGraphqlServer } from '../src/index.js';
import { defaultOf, FLAG_SETTING_NAMES, flagSettingOf } from '../src/settings.js';

/*
 * Keeps the reference in docs/ true to the code: the flag table of configuration.md against the
 * settings table (src/settings.ts) and what `svc-graphql --help` prints, and the code table of errors.md against the error codes the
 * packages answer with (and GraphQL Yoga's own codes against the installed Yoga).
 */

const ROOT = resolve(fileURLToPath(new URL('../../..', import.meta.url)));
const BIN = join(ROOT, 'packages/server/src/cli/bin.ts');

function readDoc(path: string): string {
  return readFileSync(join(ROOT, path), 'utf8');
}

/** The rows (cells, trimmed) of the first table after the line `heading`, header and separator left out. */
function tableAfter(markdown: string, heading: string): string[][] {
  const lines = markdown.split('\n');
  const start = lines.indexOf(heading);
  if (start === -1) throw new Error(`no line "${heading}"`);
  const rows: string[][] = [];
  let inTable = false;
  for (const line of lines.slice(start + 1)) {
    if (line.startsWith('|')) {
      inTable = true;
      rows.push(line.slice(1, line.endsWith('|') ? -1 : undefined).split('|').map((cell) => cell.trim()));
    } else if (inTable || line.startsWith('#')) {
      break;
    }
  }
  if (rows.length < 3) throw new Error(`no table after "${heading}"`);
  return rows.slice(2);
}

/** `\`--flag\`` → `--flag`. */
function unquote(cell: string): string {
  return cell.replace(/^`|`$/g, '');
}

function sorted(values: Iterable<string>): string[] {
  return [...new Set(values)].sort();
}

/** `svc-graphql --help`, run as a user runs it, with none of the developer's SVC_GRAPHQL_* variables. */
async function helpText(): Promise<string> {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) if (!key.startsWith('SVC_GRAPHQL_')) env[key] = value;
  const child = spawn(process.execPath, ['--import', 'tsx', BIN, '--help'], { cwd: ROOT, env });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const code = await new Promise<number | null>((done) => child.on('exit', done));
  expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
  return stdout;
}

interface HelpFlag {
  flag: string;
  env: string | undefined;
  default: string | undefined;
}

/** The flag lines of the help: `  --flag ARG    SVC_GRAPHQL_VAR    (default X, …)`. */
function helpFlags(help: string): HelpFlag[] {
  const flags: HelpFlag[] = [];
  for (const line of help.split('\n')) {
    const match = /^\s+(--[a-z0-9-]+)\b(.*)$/.exec(line);
    if (!match) continue;
    const rest = match[2] as string;
    flags.push({
      flag: match[1] as string,
      env: /\b(SVC_GRAPHQL_[A-Z0-9_]+)\b/.exec(rest)?.[1],
      default: /\(default ([^,;)]+)/.exec(rest)?.[1]?.trim(),
    });
  }
  return flags;
}

describe('docs/reference/configuration.md', () => {
  const doc = readDoc('docs/reference/configuration.md');
  const rows = tableAfter(doc, '## Flags');
  let help = '';
  beforeAll(async () => {
    help = await helpText();
  });

  it('lists in its flag table exactly the flags `svc-graphql --help` prints, and the reverse', () => {
    const documented = rows.map((row) => unquote(row[0] as string));
    const printed = helpFlags(help).map((flag) => flag.flag);
    expect(printed.length).toBeGreaterThan(10);
    expect(sorted(documented)).toEqual(sorted(printed));
    // A flag documented twice would hide a stale row.
    expect(documented.length).toBe(new Set(documented).size);
  });

  it('gives each flag the environment variable and the default that --help prints', () => {
    const byFlag = new Map(rows.map((row) => [unquote(row[0] as string), row]));
    for (const flag of helpFlags(help)) {
      const row = byFlag.get(flag.flag);
      if (row === undefined) continue; // reported by the test above
      expect(unquote(row[1] as string), `environment variable of ${flag.flag}`).toBe(flag.env);
      if (flag.default !== undefined) {
        expect(row[2], `default of ${flag.flag}`).toContain(flag.default);
      }
    }
  });

  it('has one row per entry of the settings table, with its flag, variable and default, in its order', () => {
    const expected = FLAG_SETTING_NAMES.map((name) => {
      const { flag, env } = flagSettingOf(name);
      const fallback = defaultOf(name);
      return [`\`${flag}\``, `\`${env}\``, fallback === undefined ? 'none' : `\`${String(fallback)}\``];
    });
    expect(rows.map((row) => row.slice(0, 3))).toEqual(expected);
  });

  it('names every command of the help in its Commands section', () => {
    const commands = sorted([...help.matchAll(/svc-graphql (?:\[[^\]]*\] )?([a-z][a-z-]+)/g)].map((match) => match[1] as string));
    expect(commands).toContain('serve');
    const section = doc.slice(doc.indexOf('## Commands'), doc.indexOf('## Flags'));
    for (const command of commands) expect(section, command).toMatch(new RegExp(`svc-graphql (\\[[^\\]]*\\] )?${command}\\b`));
  });
});

/** Every `.ts` file under `dir`. */
function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
    .map((entry) => join(entry.parentPath, entry.name));
}

const CODE = "'([a-z]+(?:-[a-z]+)*)'";

/**
 * The error codes the packages answer with, read from their sources: the `…ErrorCode` unions (the
 * code tables of each package), `code: '…'` properties and types, domain errors constructed with a
 * code (`new MetadataApiError('not-exists', …)`), and codes passed next to their HTTP status
 * (`limitError(message, 'validation-failed', 400)`).
 */
function codesInSources(): Map<string, string> {
  const found = new Map<string, string>();
  const add = (code: string, file: string) => {
    if (!found.has(code)) found.set(code, file.slice(ROOT.length + 1));
  };
  const packages = join(ROOT, 'packages');
  for (const name of readdirSync(packages)) {
    for (const file of sourceFiles(join(packages, name, 'src'))) {
      const text = readFileSync(file, 'utf8');
      for (const union of text.matchAll(/\btype \w*ErrorCode\s*=([^;]+);/g)) {
        for (const literal of (union[1] as string).matchAll(new RegExp(CODE, 'g'))) add(literal[1] as string, file);
      }
      for (const property of text.matchAll(new RegExp(`\\bcode\\??\\s*:\\s*(${CODE}(?:\\s*\\|\\s*${CODE})*)`, 'g'))) {
        for (const literal of (property[1] as string).matchAll(new RegExp(CODE, 'g'))) add(literal[1] as string, file);
      }
      for (const constructed of text.matchAll(new RegExp(`new \\w*Error\\(\\s*'([a-z]+(?:-[a-z]+)+)'`, 'g'))) add(constructed[1] as string, file);
      for (const withStatus of text.matchAll(new RegExp(`'([a-z]+(?:-[a-z]+)+)',\\s*[1-5]\\d\\d\\b`, 'g'))) add(withStatus[1] as string, file);
    }
  }
  return found;
}

/**
 * The codes the installed GraphQL Yoga answers with. `REQUEST_ENTITY_TOO_LARGE` is left out: Yoga
 * answers it only for its own body limit, which the server turns off (its own limit answers
 * `payload-too-large` first), and for a multipart file size limit, which the server never sets.
 */
function yogaCodes(): string[] {
  const require = createRequire(join(ROOT, 'packages/server/package.json'));
  const yogaDir = dirname(require.resolve('graphql-yoga'));
  const codes = new Set<string>();
  for (const entry of readdirSync(yogaDir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile() || !entry.name.endsWith('.js')) continue;
    const text = readFileSync(join(entry.parentPath, entry.name), 'utf8');
    for (const match of text.matchAll(/\bcode: '([A-Z_]+)'|'(GRAPHQL_[A-Z_]+)'/g)) codes.add((match[1] ?? match[2]) as string);
  }
  codes.delete('REQUEST_ENTITY_TOO_LARGE');
  // Answered with Hasura's codes instead (parse-failed, validation-failed).
  codes.delete('GRAPHQL_PARSE_FAILED');
  codes.delete('GRAPHQL_VALIDATION_FAILED');
  return sorted(codes);
}

describe('docs/reference/errors.md', () => {
  const doc = readDoc('docs/reference/errors.md');
  const documented = tableAfter(doc, '## Codes').map((row) => unquote(row[0] as string));
  const ours = documented.filter((code) => /^[a-z]/.test(code));
  const yoga = documented.filter((code) => /^[A-Z]/.test(code));

  it('lists in its code table exactly the error codes the packages answer with, and the reverse', () => {
    const inSources = codesInSources();
    expect(inSources.size).toBeGreaterThan(10);
    const missing = [...inSources].filter(([code]) => !ours.includes(code)).map(([code, file]) => `${code} (${file})`);
    const stale = ours.filter((code) => !inSources.has(code));
    expect({ missing, stale }).toEqual({ missing: [], stale: [] });
    expect(documented.length).toBe(new Set(documented).size);
  });

  it("lists exactly GraphQL Yoga's codes a client can meet", () => {
    expect(sorted(yoga)).toEqual(yogaCodes());
  });

  it('uses no code in its other tables that the code table leaves out', () => {
    // Code columns of the detailed tables: a cell that is one backquoted code.
    const elsewhere = new Set<string>();
    for (const line of doc.split('\n')) {
      if (!line.startsWith('|')) continue;
      for (const cell of line.split('|').map((c) => c.trim())) {
        const match = /^`([a-z]+(?:-[a-z]+)+|[A-Z]+(?:_[A-Z]+)+)`$/.exec(cell);
        if (match && !/^x-svc-/.test(match[1] as string)) elsewhere.add(match[1] as string);
      }
    }
    expect([...elsewhere].filter((code) => !documented.includes(code))).toEqual([]);
  });

  describe('against a running server', () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-graphql-docs-'));
    let server: SvcGraphqlServer;
    beforeAll(async () => {
      server = await createServer({ port: 0, databaseUrl: `file:${join(dir, 'metadata.json')}`, logger: silent });
    });
    afterAll(async () => {
      await server?.close();
      rmSync(dir, { recursive: true, force: true });
    });

    it("answers GraphQL Yoga's errors with the codes, statuses and messages errors.md quotes", async () => {
      const post = (body: string, accept = 'application/json') =>
        fetch(`${server.url}/v1/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', accept }, body });
      const cases: Array<[Response, number, string, string]> = [
        [await post('{"query":"{ no_queries_available "}'), 200, 'parse-failed', 'Syntax Error: Expected Name, found <EOF>.'],
        [await post('{"query":"{ nope }"}'), 200, 'validation-failed', 'Cannot query field "nope" on type "Query".'],
        [await post('{"query":"{ nope }"}', 'application/graphql-response+json'), 400, 'validation-failed', 'Cannot query field "nope" on type "Query".'],
        [await post('{"query":"mutation { x }"}'), 200, 'validation-failed', 'Schema is not configured to execute mutation operation.'],
        [await post('{"query":"subscription { x }"}', 'application/graphql-response+json'), 400, 'validation-failed', 'Schema is not configured to execute subscription operation.'],
        [await post('{}'), 200, 'BAD_REQUEST', 'Must provide query string.'],
        [await post('"x"'), 400, 'BAD_REQUEST', 'POST body is expected to be object but received string'],
        [await post('{"query":5}'), 400, 'BAD_REQUEST', 'Expected "query" param to be a string, but given number.'],
        [await post('{"query":"{ __typename }","variables":5}'), 400, 'BAD_REQUEST', 'Expected "variables" param to be empty or an object, but given number.'],
        [await post('{}', 'application/graphql-response+json'), 400, 'BAD_REQUEST', 'Must provide query string.'],
        [await post('{"query":'), 400, 'BAD_REQUEST', 'POST body sent invalid JSON.'],
        [await post('{"query":', 'application/graphql-response+json'), 400, 'BAD_REQUEST', 'POST body sent invalid JSON.'],
        [
          await fetch(`${server.url}/v1/graphql`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: '{"query":"{ __typename }"}' }),
          415,
          'BAD_REQUEST',
          'unsupported Content-Type "text/plain"; send the GraphQL request as application/json',
        ],
        [
          await fetch(`${server.url}/v1/graphql`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
            body: gzipSync('{"query":"{ __typename }"}'),
          }),
          415,
          'BAD_REQUEST',
          'unsupported Content-Encoding "gzip"; send the request body uncompressed',
        ],
        [
          await fetch(`${server.url}/v1/graphql`, { method: 'POST', headers: { 'content-type': 'application/json; charset=iso-8859-1' }, body: '{"query":"{ __typename }"}' }),
          415,
          'BAD_REQUEST',
          'unsupported charset "iso-8859-1"; send the request body as UTF-8',
        ],
        [
          await fetch(`${server.url}/v1/graphql`, { method: 'POST', body: new Uint8Array([123, 125]) }),
          415,
          'BAD_REQUEST',
          'the request has no Content-Type; send the GraphQL request as application/json',
        ],
        [
          await fetch(`${server.url}/v1/graphql?query=${encodeURIComponent('query A { __typename } query B { __typename }')}`, {
            headers: { accept: 'application/json' },
          }),
          200,
          'OPERATION_RESOLUTION_FAILURE',
          'Could not determine what operation to execute.',
        ],
      ];
      for (const [response, status, code, message] of cases) {
        const body = (await response.json()) as { errors: Array<{ message: string; extensions?: Record<string, unknown> }> };
        // The server's error shape: the code and `path: "$"`, nothing internal (a parser's own message).
        expect({ status: response.status, extensions: body.errors[0]?.extensions, message: body.errors[0]?.message }).toEqual({
          status,
          extensions: { code, path: '$' },
          message,
        });
        expect(doc).toContain(`\`${message}\``);
        expect(documented).toContain(code);
      }
    });

    it('reads a media type in any case, as HTTP says, on the direct lane and through Yoga', async () => {
      for (const type of ['Application/JSON', 'APPLICATION/JSON ; charset=UTF-8', 'application/graphql+JSON']) {
        for (const body of ['{"query":"{ __typename }"}', '[{"query":"{ __typename }"}]']) {
          const response = await fetch(`${server.url}/v1/graphql`, { method: 'POST', headers: { 'content-type': type }, body });
          const expected = { data: { __typename: 'Query' } };
          expect({ type, status: response.status, body: await response.json() }).toEqual({ type, status: 200, body: body.startsWith('[') ? [expected] : expected });
        }
      }
      const graphql = await fetch(`${server.url}/v1/graphql`, { method: 'POST', headers: { 'content-type': 'Application/GraphQL' }, body: '{ __typename }' });
      expect(await graphql.json()).toEqual({ data: { __typename: 'Query' } });
    });

    it('answers in the media type Accept weighs most, never in one it refuses (q=0)', async () => {
      const status = async (accept: string) => {
        const response = await fetch(`${server.url}/v1/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', accept }, body: '{"query":"{ nope }"}' });
        await response.arrayBuffer();
        return [response.status, response.headers.get('content-type')];
      };
      expect(await status('application/json;q=0, application/graphql-response+json')).toEqual([400, 'application/graphql-response+json; charset=utf-8']);
      expect(await status('application/graphql-response+json;q=0, application/json')).toEqual([200, 'application/json; charset=utf-8']);
      expect(await status('application/json;q=0.5, application/graphql-response+json;q=0.9')).toEqual([400, 'application/graphql-response+json; charset=utf-8']);
      // Nothing it accepts: 406.
      expect((await status('application/json;q=0'))[0]).toBe(406);
    });
  });
});

const silent = { debug() {}, info() {}, warn() {}, error() {} };
