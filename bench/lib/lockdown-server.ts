// `pnpm bench lockdown`, part (c): the lock-down through the real server, side by side in one run.
// svc-graphql in child processes behind the sample remote: nothing on; the allow list on with
// 10,000 allowed documents (a flag: its own process); a rate limit counted by the instance alone;
// the same through Redis. Every answer is checked (data, no error: the limit is far above the load).
// Two identical processes differ by several per cent in CPU per request (the control case, a
// second process with nothing on, shows how much), so the rate limits are compared within one
// process: `set_api_limits` and `remove_api_limits` switch them between the windows.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestRedis } from '../../packages/server/test/utils/redis-server.js';
import { caseRunner, CASE_COLUMNS, caseRow, newCase, PAIR_COLUMNS, pairRow, pairsNote, type Case, type PairResult } from './cases.js';
import { startChild, type ChildServer } from './child.js';
import type { BenchConfig } from './config.js';
import { ADMIN_SECRET, startSvc } from './gateway.js';
import { hs256UserToken } from './jwt.js';
import { graphqlData } from './load.js';
import { metadataOrThrow } from './metadata.js';
import { progress, targets, type Target } from './report.js';
import { formatTable, median } from './table.js';

const CONTROL = 'control: no lock-down, another process';
const LOCAL = 'rate limit, each instance alone';
const SHARED = 'rate limit through Redis';
const QUERY = 'query Bench($name: String) { hello(name: $name) }';
const ALLOWED = 10_000;
const PAIRS = Math.max(0, Number(process.env['BENCH_PAIRS'] ?? 10));
const PAIR_SECONDS = Math.max(0.5, Number(process.env['BENCH_PAIR_SECONDS'] ?? 1));
const check = graphqlData((data) => (typeof data['hello'] === 'string' && data['hello'].startsWith('Hello, n') ? undefined : `hello was ${JSON.stringify(data['hello'])}`));

export async function serverPart(config: BenchConfig): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-graphql-bench-lockdown-'));
  const children: ChildServer[] = [];
  const redis = await createTestRedis();
  await redis.start();
  try {
    const jwt = await hs256UserToken();
    const remote = await startChild('lockdown-remote', 'lib/remote-server.ts', { kind: 'sample' }, config);
    children.push(remote);
    const svc = async (label: string, extra: Parameters<typeof startSvc>[5]) => {
      const child = await startSvc(label, dir, config, jwt.config, { sample: remote.url }, extra);
      children.push(child);
      return child;
    };
    const off = await svc('lockdown-off', {});
    const control = await svc('lockdown-off-again', {});
    const allowlist = await svc('lockdown-allowlist', { enableAllowlist: true });
    const queries = Array.from({ length: ALLOWED - 1 }, (_, i) => ({ name: `q${String(i)}`, query: `query Q${String(i)}($id: ID!) { user(id: $id) { id name n${String(i)} } }` }));
    queries.push({ name: 'bench', query: QUERY });
    await metadataOrThrow(allowlist.url, ADMIN_SECRET, 'create_query_collection', { name: 'app', definition: { queries } });
    await metadataOrThrow(allowlist.url, ADMIN_SECRET, 'add_collection_to_allowlist', { collection: 'app' });
    const limits = { rate_limit: { global: { max_reqs_per_min: 1_000_000, unique_params: 'IP' } } };
    const local = await svc('lockdown-rate-local', {});
    const shared = await svc('lockdown-rate-redis', { rateLimitRedisUrl: redis.url });
    // The rate limit of a process switched on or off between windows (not measured), only when it changes.
    const limited = new Map<ChildServer, boolean>();
    const rateLimit = (child: ChildServer, on: boolean) => async () => {
      if (limited.get(child) === on) return;
      if (on) await metadataOrThrow(child.url, ADMIN_SECRET, 'set_api_limits', limits);
      else await metadataOrThrow(child.url, ADMIN_SECRET, 'remove_api_limits', {});
      limited.set(child, on);
    };

    const headers = [{ 'content-type': 'application/json', authorization: `Bearer ${jwt.token}` }];
    const body = (i: number) => JSON.stringify({ query: QUERY, variables: { name: `n${String(i)}` } });
    const base = newCase('no lock-down', off, headers, check, body);
    const allowlistOn = newCase(`allow list on, ${String(ALLOWED)} documents`, allowlist, headers, check, body);
    const localOff = newCase('no rate limit (the local-counting process)', local, headers, check, body, rateLimit(local, false));
    const localOn = newCase(LOCAL, local, headers, check, body, rateLimit(local, true));
    const sharedOff = newCase('no rate limit (the Redis process)', shared, headers, check, body, rateLimit(shared, false));
    const sharedOn = newCase(SHARED, shared, headers, check, body, rateLimit(shared, true));
    const controlCase = newCase(CONTROL, control, headers, check, body);
    const cases: Case[] = [base, allowlistOn, localOff, localOn, sharedOff, sharedOn, controlCase];
    // What each case's ratios in the table are to: the same process without the rate limit, or the first process.
    const baseOf = new Map<Case, Case>([[allowlistOn, base], [localOn, localOff], [sharedOn, sharedOff], [controlCase, base]]);
    const runner = caseRunner(config, remote);
    await runner.rounds(cases);
    const pairs: PairResult[] = [];
    for (const [from, to] of [[base, allowlistOn], [localOff, localOn], [sharedOff, sharedOn], [base, controlCase]] as const) {
      pairs.push(await runner.alternate(from, to, PAIRS, PAIR_SECONDS));
    }
    const failures = cases.reduce((sum, c) => sum + c.failures, 0);
    if (failures > 0) throw new Error(`${String(failures)} answers failed their check: ${cases.map((c) => `${c.label}: ${[...c.reasons.keys()].join('; ')}`).join(' | ')}`);
    const minimum: Record<string, number> = { [allowlistOn.label]: 0.97, [LOCAL]: 0.97, [SHARED]: 0.9 };
    const goals: Target[] = [];
    for (const pair of pairs) {
      const target = minimum[pair.other.label];
      if (target === undefined) continue;
      for (const [what, values] of [['req/s', pair.rps], ['CPU per request', pair.cpu]] as const) {
        const measured = median(values);
        goals.push({ name: `${pair.other.label}, ${what} at least ${String(target)}x of ${pair.base.label}`, measured: `${measured.toFixed(3)}x`, pass: measured >= target });
      }
    }
    progress('lock-down through the server done');
    return [
        '### (c) Through the server (svc-graphql in child processes, the sample remote, JWT role user)',
        '',
        formatTable(CASE_COLUMNS, cases.map((c) => caseRow(c, baseOf.get(c)))),
        '',
        formatTable(PAIR_COLUMNS, pairs.map(pairRow)),
        '',
        pairsNote(PAIRS, PAIR_SECONDS),
        '',
        'The allow list is a flag, so it is compared across two processes; the control row compares two identical processes (nothing on) the same way, and its distance from 1.000x is the noise such a comparison carries. The rate limits are compared within one process each, switched on and off between windows.',
        '',
        targets(goals),
      ].join('\n');
  } finally {
    for (const child of children.reverse()) await child.close();
    await redis.kill();
    rmSync(dir, { recursive: true, force: true });
  }
}
