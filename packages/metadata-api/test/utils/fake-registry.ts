/**
 * A small in-memory stand-in for `createRemoteSchemaRegistry()`, used only where the test is about
 * metadata-level logic (validation, persistence, ordering). Remotes are SDL strings keyed by URL;
 * a URL without SDL behaves like a remote that is down. It does not validate permissions: a test
 * says which ones it refuses (`permissionProblems`). The integration tests use the real registry.
 */
import { buildSchema, graphql, getIntrospectionQuery, type ExecutionResult, type GraphQLSchema } from 'graphql';
import type { RemoteSchemaEntry, RemoteSchemaProblem, RemoteSchemaRegistry } from '../../src/registry.js';

interface FakePlan {
  readonly schema: GraphQLSchema;
  readonly problems: readonly RemoteSchemaProblem[];
  readonly entries: readonly RemoteSchemaEntry[];
}

export interface FakeRegistry {
  readonly schema: GraphQLSchema;
  schemaFor(session: { role: string; isAdmin?: boolean } | undefined): GraphQLSchema;
  /**
   * Whether permissions are on (as the metadata service checks: they must agree); they are never
   * enforced here: every session is served the live schema.
   */
  readonly permissions: { getSession(context: unknown): undefined } | null;
  readonly logger: RemoteSchemaRegistry['logger'];
  /** SDL served at each URL; delete a key to take that remote down. */
  readonly remotes: Map<string, string>;
  /** How many plans were committed. */
  commits: number;
  /** The reload option of every plan() call. */
  readonly reloads: Array<readonly string[] | 'all'>;
  /** The entries of every plan() call. */
  readonly planned: Array<readonly RemoteSchemaEntry[]>;
  /**
   * `"<remote>/<role>"` -> the message plan() reports for that permission (code `validation-failed`)
   * while the remote is loaded; every other permission is accepted as it is.
   */
  readonly permissionProblems: Map<string, string>;
  onSchemaChange(listener: (schema: GraphQLSchema) => void): () => void;
  plan(desired: readonly RemoteSchemaEntry[], options?: { reload?: Iterable<string> | 'all' }): Promise<FakePlan>;
  commit(plan: FakePlan): void;
  problems(): readonly RemoteSchemaProblem[];
  introspect(name: string): Promise<ExecutionResult>;
  dispose(): Promise<void>;
}

const EMPTY_SDL = 'type Query { no_queries_available: String }';

export function createFakeRegistry(remotes: Record<string, string> = {}, options: { permissions?: boolean } = {}): FakeRegistry {
  const listeners = new Set<(schema: GraphQLSchema) => void>();
  let live: FakePlan = { schema: buildSchema(EMPTY_SDL), problems: [], entries: [] };
  const registry: FakeRegistry = {
    get schema() {
      return live.schema;
    },
    schemaFor() {
      return live.schema;
    },
    permissions: options.permissions === true ? { getSession: () => undefined } : null,
    logger: { debug() {}, info() {}, warn() {}, error() {} },
    remotes: new Map(Object.entries(remotes)),
    commits: 0,
    reloads: [],
    planned: [],
    permissionProblems: new Map(),
    onSchemaChange(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    async plan(desired, options) {
      const reload = options?.reload;
      registry.reloads.push(reload === undefined ? [] : reload === 'all' ? 'all' : [...reload]);
      registry.planned.push(structuredClone(desired));
      const fields = new Map<string, string>();
      const problems: RemoteSchemaProblem[] = [];
      for (const { name, definition, permissions } of desired) {
        const url = definition.url ?? process.env[definition.url_from_env ?? ''] ?? '';
        const sdl = registry.remotes.get(url);
        if (sdl === undefined) {
          problems.push({ name, code: 'remote-schema-error', message: `HTTP exception occurred while sending the request to "${url}"` });
          continue;
        }
        const own = new Map<string, string>();
        const namespace = definition.customization?.root_fields_namespace;
        const query = buildSchema(sdl).getQueryType();
        if (namespace !== undefined) {
          own.set(namespace, 'String');
        } else {
          for (const field of Object.values(query?.getFields() ?? {})) own.set(field.name, String(field.type));
        }
        const clash = [...own.keys()].find((field) => fields.has(field));
        if (clash !== undefined) {
          problems.push({ name, code: 'invalid-configuration', message: `Inconsistent object: Duplicate remote field '${clash}'` });
          continue;
        }
        for (const [field, type] of own) fields.set(field, type);
        for (const { role } of permissions ?? []) {
          const message = registry.permissionProblems.get(`${name}/${role}`);
          if (message !== undefined) problems.push({ name, role, code: 'validation-failed', message });
        }
      }
      const sdl =
        fields.size === 0 ? EMPTY_SDL : `type Query { ${[...fields].map(([field, type]) => `${field}: ${type}`).join(' ')} }`;
      return { schema: buildSchema(sdl), problems, entries: [...desired] };
    },
    commit(plan) {
      registry.commits += 1;
      live = plan;
      for (const listener of listeners) listener(plan.schema);
    },
    problems: () => live.problems,
    async introspect(name) {
      const entry = live.entries.find((candidate) => candidate.name === name);
      const sdl = entry === undefined ? undefined : registry.remotes.get(entry.definition.url ?? '');
      if (sdl === undefined) throw new Error(`remote schema "${name}" cannot be introspected`);
      return graphql({ schema: buildSchema(sdl), source: getIntrospectionQuery() });
    },
    async dispose() {
      listeners.clear();
    },
  };
  return registry;
}
