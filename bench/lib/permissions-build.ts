// A child of `pnpm bench permissions`: builds the schemas of N roles of one grant shape with the
// registry of packages/remote-schemas in this process, and prints what it measured as one JSON line
// on stdout. Run with --expose-gc, one process per measurement, so that every figure starts from a
// fresh heap:
//
//   node --import tsx --expose-gc bench/lib/permissions-build.ts '<JSON BuildRequest>'
import { PerformanceObserver } from 'node:perf_hooks';
import { getHeapStatistics } from 'node:v8';
import { getNamedType, isObjectType, type GraphQLObjectType, type GraphQLSchema } from 'graphql';
import { createGeneratedSchema } from '../../examples/sample-remotes/src/index.js';
import { createRemoteSchemaRegistry } from '../../packages/remote-schemas/src/index.js';
import type { RemoteSchemaPermission, RemoteSchemaRegistry } from '../../packages/remote-schemas/src/index.js';

/**
 * - `small`: 10 root fields per role (a different ten for each role) and the types they reach
 *   through `parent` (about 30 types).
 * - `full`: every type and root field of the remote but one field (`value` of a different type for
 *   each role), so that nothing can be shared with the public schema: the largest role schema a
 *   1,000-type remote can have.
 */
export type GrantShape = 'small' | 'full';

export interface BuildRequest {
  /** The generated remote's GraphQL endpoint. */
  readonly remoteUrl: string;
  /** Its `createGeneratedSchema` options, to write grants that fit it. */
  readonly types: number;
  readonly prefix: string;
  readonly shape: GrantShape;
  readonly roles: number;
  /** Role schemas built, in a registry of their own, before anything is measured (JIT). */
  readonly warmupRoles: number;
}

export interface BuildResult {
  readonly shape: GrantShape;
  readonly roles: number;
  /** Length of the SDL of the first role's permission. */
  readonly sdlChars: number;
  /** Object types (not counting `Query`) in a role's grant, on average over the roles. */
  readonly grantTypes: number;
  /** `plan()` of the remote alone (introspection, composition), ms. */
  readonly planBareMs: number;
  /** `plan()` of the remote with the N permissions (each one checked against the remote), ms. */
  readonly planMs: number;
  /** Heap held by the registry after `plan()` + `commit()` with the N permissions, minus without any. */
  readonly permissionsHeapBytes: number;
  /** `schemaFor` of each role once, in turn (each builds that role's schema), ms in all. */
  readonly buildMs: number;
  readonly buildMsPerRole: { readonly median: number; readonly p99: number; readonly max: number };
  /** CPU time of this process (every thread: GC helpers too) while the N schemas were built, ms. */
  readonly buildCpuMs: number;
  /** Time V8 reported in garbage collection while the N schemas were built, ms. */
  readonly gcMs: number;
  /** Heap used after a full GC with the N role schemas held, minus before they were built. */
  readonly heapBytes: number;
  readonly rssBytes: number;
  /** `schemaFor` of each role again (every one must be the schema built before), microseconds per call. */
  readonly lookupUs: number;
  /** What was wrong with the role schemas (evicted, shared, not the grant); empty when all is well. */
  readonly problems: readonly string[];
  /** V8's heap limit of this process (`--max-old-space-size`, or Node's default for the machine). */
  readonly heapLimitBytes: number;
}

const gc = (globalThis as { gc?: () => void }).gc;

function fullGc(): void {
  if (!gc) throw new Error('run with --expose-gc');
  gc();
  gc();
}

function fieldLine(type: GraphQLObjectType, keep: (field: string) => boolean): string {
  const fields = Object.values(type.getFields()).filter((field) => keep(field.name));
  return `type ${type.name} { ${fields.map((field) => `${field.name}: ${String(field.type)}`).join(' ')} }`;
}

/** SDL of the root fields `roots` and every type they reach, without `omit` (type, field). */
function grantSdl(schema: GraphQLSchema, roots: readonly string[], omit?: { type: string; field: string }): { sdl: string; types: number } {
  const query = schema.getQueryType();
  if (!query) throw new Error('the generated schema has no Query type');
  const keep = (type: string) => (field: string) => !(omit && omit.type === type && omit.field === field);
  const reached = new Map<string, GraphQLObjectType>();
  const visit = (type: GraphQLObjectType): void => {
    if (reached.has(type.name)) return;
    reached.set(type.name, type);
    for (const field of Object.values(type.getFields())) {
      const named = getNamedType(field.type);
      if (keep(type.name)(field.name) && isObjectType(named)) visit(named);
    }
  };
  const rootFields = query.getFields();
  for (const root of roots) {
    const named = rootFields[root] && getNamedType(rootFields[root].type);
    if (!isObjectType(named)) throw new Error(`no root field "${root}" of an object type`);
    visit(named);
  }
  const lines = [...reached.values()].map((type) => fieldLine(type, keep(type.name)));
  lines.push(fieldLine(query, (field) => roots.includes(field)));
  return { sdl: lines.join('\n'), types: reached.size };
}

function permissionsFor(request: BuildRequest, schema: GraphQLSchema, rolePrefix: string, count: number) {
  const rootFields = Object.values(schema.getQueryType()?.getFields() ?? {});
  const roots = rootFields.map((field) => field.name);
  const typeNames = rootFields.map((field) => getNamedType(field.type).name);
  const permissions: RemoteSchemaPermission[] = [];
  let first: { sdl: string } | undefined;
  let types = 0;
  for (let i = 0; i < count; i++) {
    const grant =
      request.shape === 'small'
        ? grantSdl(schema, Array.from({ length: 10 }, (_, k) => roots[(i * 10 + k) % roots.length] ?? ''))
        : grantSdl(schema, roots, { type: typeNames[i % typeNames.length] ?? '', field: 'value' });
    first ??= grant;
    types += grant.types;
    permissions.push({ role: `${rolePrefix}${i}`, schema: grant.sdl });
  }
  return { permissions, sdlChars: first?.sdl.length ?? 0, grantTypes: types / Math.max(1, count), rootsOfFull: roots.length };
}

async function registryWith(request: BuildRequest, permissions: readonly RemoteSchemaPermission[]): Promise<{ registry: RemoteSchemaRegistry; ms: number }> {
  const registry = createRemoteSchemaRegistry({
    enableRemoteSchemaPermissions: true,
    // Room for every role: an evicted schema would be built again and counted twice.
    maxRoleSchemas: Math.max(1, permissions.length),
    retry: false,
  });
  const started = performance.now();
  const plan = await registry.plan([{ name: 'generated', definition: { url: request.remoteUrl }, permissions }]);
  const ms = performance.now() - started;
  if (plan.problems.length > 0) {
    await registry.dispose();
    throw new Error(`plan has problems: ${JSON.stringify(plan.problems.slice(0, 3))}`);
  }
  registry.commit(plan);
  return { registry, ms };
}

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

async function measure(request: BuildRequest): Promise<BuildResult> {
  const schema = createGeneratedSchema({ types: request.types, prefix: request.prefix });

  // Warm-up: the same work on other roles, in a registry that is gone before the measurement.
  const warm = await registryWith(request, permissionsFor(request, schema, 'warm', request.warmupRoles).permissions);
  for (let i = 0; i < request.warmupRoles; i++) warm.registry.schemaFor({ role: `warm${i}` });
  await warm.registry.dispose();

  const { permissions, sdlChars, grantTypes, rootsOfFull } = permissionsFor(request, schema, 'role', request.roles);
  fullGc();
  let heapBefore = process.memoryUsage().heapUsed;
  const bare = await registryWith(request, []);
  fullGc();
  const bareHeap = process.memoryUsage().heapUsed - heapBefore;
  await bare.registry.dispose();

  fullGc();
  heapBefore = process.memoryUsage().heapUsed;
  const { registry, ms: planMs } = await registryWith(request, permissions);
  try {
    const live = registry.schema;
    fullGc();
    const permissionsHeapBytes = process.memoryUsage().heapUsed - heapBefore - bareHeap;
    heapBefore = process.memoryUsage().heapUsed;
    let gcMs = 0;
    const observer = new PerformanceObserver((list) => {
      for (const entry of list.getEntries()) gcMs += entry.duration;
    });
    observer.observe({ entryTypes: ['gc'] });

    const perRole: number[] = new Array<number>(request.roles);
    const built: GraphQLSchema[] = new Array<GraphQLSchema>(request.roles);
    const cpuBefore = process.cpuUsage();
    const started = performance.now();
    for (let i = 0; i < request.roles; i++) {
      const t = performance.now();
      built[i] = registry.schemaFor({ role: `role${i}` });
      perRole[i] = performance.now() - t;
    }
    const buildMs = performance.now() - started;
    const cpu = process.cpuUsage(cpuBefore);
    // GC entries are delivered asynchronously, after the loop above gave the thread back.
    await new Promise((resolve) => setTimeout(resolve, 100));
    observer.disconnect();
    fullGc();
    const heapAfter = process.memoryUsage().heapUsed;
    const rssBytes = process.memoryUsage().rss;

    const problems: string[] = [];
    const lookupStart = performance.now();
    for (let i = 0; i < request.roles; i++) {
      if (registry.schemaFor({ role: `role${i}` }) !== built[i]) problems.push(`role${i}: built again on its second request (evicted)`);
    }
    const lookupUs = ((performance.now() - lookupStart) * 1000) / request.roles;
    const expectedRoots = request.shape === 'small' ? 10 : rootsOfFull;
    const distinct = new Set(built);
    if (distinct.size !== request.roles) problems.push(`${request.roles - distinct.size} roles share a schema with another role`);
    for (let i = 0; i < request.roles; i++) {
      const role = built[i];
      const roots = Object.keys(role?.getQueryType()?.getFields() ?? {}).length;
      if (role === live) problems.push(`role${i}: served the live schema`);
      else if (roots !== expectedRoots) problems.push(`role${i}: ${roots} root fields, expected ${expectedRoots}`);
      if (problems.length > 10) break;
    }
    const sorted = [...perRole].sort((a, b) => a - b);
    return {
      shape: request.shape,
      roles: request.roles,
      sdlChars,
      grantTypes,
      planBareMs: bare.ms,
      planMs,
      permissionsHeapBytes,
      buildMs,
      buildCpuMs: (cpu.user + cpu.system) / 1000,
      buildMsPerRole: { median: percentile(sorted, 50), p99: percentile(sorted, 99), max: sorted[sorted.length - 1] ?? Number.NaN },
      gcMs,
      heapBytes: heapAfter - heapBefore,
      rssBytes,
      lookupUs,
      problems,
      heapLimitBytes: getHeapStatistics().heap_size_limit,
    };
  } finally {
    await registry.dispose();
  }
}

const raw = process.argv[2];
if (raw === undefined) {
  console.error('permissions-build: run me through bench/permissions.ts');
  process.exit(2);
}
try {
  process.stdout.write(`${JSON.stringify(await measure(JSON.parse(raw) as BuildRequest))}\n`);
} catch (error) {
  console.error(error instanceof Error ? (error.stack ?? error.message) : String(error));
  process.exitCode = 1;
}
