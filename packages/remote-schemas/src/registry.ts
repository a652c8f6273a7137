import { validateSchema, type ExecutionResult, type GraphQLSchema } from 'graphql';
import { LRUCache } from 'lru-cache';
import { builtInScalarMapping, renameInIntrospection, restoreInRequests } from './builtin-scalars.js';
import { compose, composeInSteps, createPlaceholderSchema } from './compose.js';
import { resolveDefinition } from './definition.js';
import { RemoteSchemaError } from './errors.js';
import type { LoadedRemote } from './loaded-remote.js';
import {
  normalizeOptions,
  type Logger,
  type NormalizedOptions,
  type RemoteSchemaRegistryOptions,
} from './options.js';
import type { RoleGrant } from './permissions/grant.js';
import { buildRoleSchema, grantsWholeRemote, recordRoleSchema, roleSchemaInfo, type RemoteAccess } from './permissions/role-schema.js';
import { validateRoleSchema, type RoleSchemaValidation } from './permissions/validate.js';
import { redactUrls } from './redact.js';
import { addRelationships, addRoleRelationships } from './relationships/schema.js';
import type { CompiledRelationship } from './relationships/validate.js';
import { RemoteClient, type ClientHooks } from './remote-client.js';
import { fetchTransport, nodeTransport, type DisposableTransport } from './transport.js';
import { SLICE_MS, runInSlices, yieldToEventLoop } from './slices.js';
import { buildRemoteSchema, buildUncheckedRemoteSchemaInSlices, checkDistinctNames, checkRemoteSchema, publicRemoteSchema } from './remote-schema.js';
import type {
  PlanOptions,
  RegistryPermissions,
  RegistryPlan,
  RemoteSchemaEntry,
  RemoteSchemaProblem,
  RemoteSchemaRegistry,
} from './types.js';

/** Everything that is live at once; replaced as a whole by `commit()`. */
interface State {
  schema: GraphQLSchema;
  entries: readonly RemoteSchemaEntry[];
  /** Remotes that answered and were built, by name (included in the schema or not). */
  loaded: Map<string, LoadedRemote>;
  problems: readonly RemoteSchemaProblem[];
  /** The remotes the schema includes, in order. */
  included: readonly LoadedRemote[];
  /** The consistent grants (permissions enabled), by remote name, then role. */
  grants: ReadonlyMap<string, ReadonlyMap<string, RoleGrant>>;
  /** The schemas of the roles served since this state went live (built on first use). */
  roles?: LRUCache<string, GraphQLSchema>;
  /** The relationships whose fields the schema has (role schemas get those the role may use). */
  relationships: readonly CompiledRelationship[];
}

/** The session as `schemaFor` reads it. */
type SchemaSession = { role: string; isAdmin?: boolean } | undefined;

interface InternalPlanOptions extends PlanOptions {
  /**
   * Background retry: only these remotes are introspected again; other remotes that are not loaded
   * keep the problem they have in the live state.
   */
  attemptOnly?: ReadonlySet<string>;
}

interface Retry {
  key: string;
  delayMs: number;
  timer: ReturnType<typeof setTimeout>;
}


function keyOf(entry: RemoteSchemaEntry): string {
  return JSON.stringify(entry.definition);
}

/** A problem of a remote itself, not of a permission or a relationship of it. */
function isRemoteProblem(problem: RemoteSchemaProblem): boolean {
  return problem.role === undefined && problem.relationship === undefined;
}

function problemOf(name: string, error: unknown): RemoteSchemaProblem {
  if (error instanceof RemoteSchemaError) {
    return error.field === undefined ? { name, code: error.code, message: error.message } : { name, code: error.code, message: error.message, field: error.field };
  }
  return { name, code: 'remote-schema-error', message: error instanceof Error ? error.message : String(error) };
}

/** The registry's workings; clients get {@link publicFace} of it. */
class Registry {
  readonly #options: NormalizedOptions;
  readonly permissions: RegistryPermissions | null;
  readonly #local: GraphQLSchema;
  readonly #placeholder: boolean;
  readonly #plans = new WeakMap<RegistryPlan, State>();
  readonly #listeners = new Set<(schema: GraphQLSchema) => void>();
  readonly #retries = new Map<string, Retry>();
  /** Permission checks of each loaded remote by role and SDL text, as of the latest plan that checked them. */
  readonly #validations = new WeakMap<LoadedRemote, Map<string, RoleSchemaValidation>>();
  /**
   * The clients that may hold upstream connections: the live ones, and retired ones (their remote
   * was replaced) while subscriptions that started on them are open. A retired client leaves as soon
   * as its last subscription ends, so replacing remotes again and again keeps nothing.
   */
  readonly #clients = new Set<RemoteClient>();
  readonly #hooks: ClientHooks = {
    onBusy: (client) => {
      // A subscription that started on an older schema may reach a retired client after it left.
      if (this.#disposed) void Promise.resolve().then(() => client.dispose());
      else this.#clients.add(client);
    },
    onIdle: (client) => {
      if (this.#live.loaded.get(client.name)?.client !== client) this.#clients.delete(client);
    },
    currentAccess: (role, remote) => roleSchemaInfo(this.schemaFor({ role }))?.remotes.get(remote),
  };
  #live: State;
  /** Serializes background retries so that one never overwrites another's result. */
  #retryChain: Promise<void> = Promise.resolve();
  #commits = 0;
  #disposed = false;
  readonly #transport: DisposableTransport;

  constructor(options: NormalizedOptions) {
    this.#options = options;
    this.#transport = options.fetch ? fetchTransport(options.fetch, options) : nodeTransport(options);
    this.#placeholder = options.localSchema === undefined;
    this.#local = options.localSchema ?? createPlaceholderSchema();
    const errors = validateSchema(this.#local);
    if (errors.length > 0) {
      throw new TypeError(`createRemoteSchemaRegistry: "localSchema" is invalid: ${errors.map((e) => e.message).join('; ')}`);
    }
    const initial = compose(this.#local, this.#placeholder, []);
    this.#live = { schema: initial.schema, entries: [], loaded: new Map(), problems: [], included: [], grants: new Map(), relationships: [] };
    this.permissions = options.enableRemoteSchemaPermissions ? Object.freeze({ getSession: options.getSession }) : null;
  }

  get schema(): GraphQLSchema {
    return this.#live.schema;
  }

  schemaFor(session: SchemaSession): GraphQLSchema {
    const live = this.#live;
    if (!this.#options.enableRemoteSchemaPermissions || session?.isAdmin === true) return live.schema;
    // No session (an app whose session lookup missed) is no role: it sees what a role without any
    // permission sees, the local schema alone. Role names are never empty.
    const role = typeof session?.role === 'string' ? session.role : '';
    live.roles ??= new LRUCache({ max: this.#options.maxRoleSchemas });
    let schema = live.roles.get(role);
    if (!schema) {
      schema = this.#buildRoleSchema(live, role);
      live.roles.set(role, schema);
    }
    return schema;
  }

  /**
   * The schema of `role` in `state`: the local schema and, of each included remote where the role
   * has a consistent grant, the granted part, customized as for everyone. Any remote whose part
   * cannot be built or composed is left out of this role's schema (never shown in full).
   */
  #buildRoleSchema(state: State, role: string): GraphQLSchema {
    const parts: LoadedRemote[] = [];
    const access = new Map<string, RemoteAccess>();
    for (const remote of state.included) {
      const grant = state.grants.get(remote.name)?.get(role);
      if (!grant) continue;
      try {
        if (grantsWholeRemote(remote.own, grant)) {
          parts.push(remote);
        } else {
          parts.push({ ...remote, public: remote.publicOf(buildRoleSchema(remote.base, grant)) });
        }
        access.set(remote.name, { grant, schema: remote.own });
      } catch (error) {
        this.#options.logger.error(
          `remote schema "${remote.name}": the schema of role "${role}" cannot be built; the role sees nothing of this remote:`,
          error,
        );
      }
    }
    const composition = compose(this.#local, this.#placeholder, parts);
    for (const problem of composition.problems) {
      access.delete(problem.name);
      this.#options.logger.warn(
        `remote schema "${problem.name}": left out of the schema of role "${role}": ${redactUrls(problem.message)}`,
      );
    }
    const schema = addRoleRelationships(composition.schema, state.relationships, access);
    recordRoleSchema(schema, { role, remotes: access });
    return schema;
  }

  onSchemaChange(listener: (schema: GraphQLSchema) => void): () => void {
    this.#listeners.add(listener);
    return () => {
      this.#listeners.delete(listener);
    };
  }

  plan(desired: readonly RemoteSchemaEntry[], options: PlanOptions = {}): Promise<RegistryPlan> {
    return this.#plan(desired, options);
  }

  async #plan(desired: readonly RemoteSchemaEntry[], options: InternalPlanOptions): Promise<RegistryPlan> {
    if (this.#disposed) throw new Error('the remote schema registry is disposed');
    // Read once: `reload` may be a one-shot iterable.
    const all = options.reload === 'all';
    const reload = new Set(options.reload === 'all' || options.reload === undefined ? [] : options.reload);
    const reloads = (name: string) => all || reload.has(name);
    const live = this.#live;
    const liveProblems = new Map(live.problems.filter(isRemoteProblem).map((p) => [p.name, p]));
    const seen = new Set<string>();
    const outcomes = await Promise.all(
      desired.map(async (entry): Promise<LoadedRemote | RemoteSchemaProblem> => {
        if (seen.has(entry.name)) {
          return { name: entry.name, code: 'invalid-configuration', message: `remote schema "${entry.name}" is given more than once` };
        }
        seen.add(entry.name);
        const key = keyOf(entry);
        const current = live.loaded.get(entry.name);
        if (current && current.key === key && !reloads(entry.name)) return current;
        if (options.attemptOnly && !options.attemptOnly.has(entry.name)) {
          const previous = liveProblems.get(entry.name);
          if (previous) return previous;
        }
        return this.#load(entry, key).catch((error: unknown) => problemOf(entry.name, error));
      }),
    );
    const loaded = new Map<string, LoadedRemote>();
    const candidates: LoadedRemote[] = [];
    const early: RemoteSchemaProblem[] = [];
    for (const outcome of outcomes) {
      if ('client' in outcome) {
        loaded.set(outcome.name, outcome);
        candidates.push(outcome);
      } else {
        early.push(outcome);
      }
    }
    await yieldToEventLoop();
    const composition = await runInSlices(composeInSteps(this.#local, this.#placeholder, candidates), SLICE_MS);
    const order = new Map(desired.map((e, i) => [e.name, i]));
    const problems = [...early, ...composition.problems].sort(
      (a, b) => (order.get(a.name) ?? 0) - (order.get(b.name) ?? 0),
    );
    const permissions = this.#options.enableRemoteSchemaPermissions
      ? await this.#checkPermissions(desired, loaded)
      : { grants: new Map<string, ReadonlyMap<string, RoleGrant>>(), problems: [] };
    problems.push(...permissions.problems);
    const joined = addRelationships(composition.schema, desired, composition.included);
    problems.push(...joined.problems);
    const plan: RegistryPlan = { schema: joined.schema, problems };
    this.#plans.set(plan, {
      schema: joined.schema,
      entries: [...desired],
      loaded,
      problems,
      included: composition.included,
      grants: permissions.grants,
      relationships: joined.relationships,
    });
    return plan;
  }

  /**
   * Checks every permission of every loaded remote against the remote's own schema, in entry
   * order. A permission of a remote that is not loaded cannot be checked and is not reported (the
   * remote is). A role given twice for one remote gets nothing of it. Results are kept per loaded
   * remote and SDL text, so a permission that did not change is not checked again.
   */
  async #checkPermissions(
    desired: readonly RemoteSchemaEntry[],
    loaded: ReadonlyMap<string, LoadedRemote>,
  ): Promise<{ grants: Map<string, ReadonlyMap<string, RoleGrant>>; problems: RemoteSchemaProblem[] }> {
    const grants = new Map<string, ReadonlyMap<string, RoleGrant>>();
    const problems: RemoteSchemaProblem[] = [];
    const seen = new Set<string>();
    let since = performance.now();
    for (const entry of desired) {
      const remote = loaded.get(entry.name);
      if (seen.has(entry.name) || !remote) continue;
      seen.add(entry.name);
      const permissions = entry.permissions ?? [];
      const counts = new Map<string, number>();
      for (const { role } of permissions) counts.set(role, (counts.get(role) ?? 0) + 1);
      const previous = this.#validations.get(remote);
      const kept = new Map<string, RoleSchemaValidation>();
      const roles = new Map<string, RoleGrant>();
      const reported = new Set<string>();
      for (const { role, schema: sdl } of permissions) {
        if ((counts.get(role) ?? 0) > 1) {
          if (!reported.has(role)) {
            reported.add(role);
            problems.push({
              name: entry.name,
              role,
              code: 'invalid-configuration',
              message: `permission for role "${role}" is given more than once`,
            });
          }
          continue;
        }
        const key = `${role}\n${sdl}`;
        let outcome = previous?.get(key);
        if (!outcome) {
          outcome = this.#validate(remote, role, sdl);
          // A deployment may hold thousands of permissions: let requests through now and then.
          if (performance.now() - since > 10) {
            await yieldToEventLoop();
            since = performance.now();
          }
        }
        kept.set(key, outcome);
        if (outcome.ok) roles.set(role, outcome.grant);
        else problems.push({ name: entry.name, role, code: 'validation-failed', message: outcome.message });
      }
      this.#validations.set(remote, kept);
      if (roles.size > 0) grants.set(entry.name, roles);
    }
    return { grants, problems };
  }

  #validate(remote: LoadedRemote, role: string, sdl: string): RoleSchemaValidation {
    try {
      return validateRoleSchema(remote.own, sdl, { sessionVariablePrefix: this.#options.sessionVariablePrefix });
    } catch (error) {
      this.#options.logger.error(`remote schema "${remote.name}": the permission of role "${role}" could not be checked:`, error);
      return { ok: false, message: 'validation for the given role-based schema failed because it could not be checked' };
    }
  }

  async #load(entry: RemoteSchemaEntry, key: string): Promise<LoadedRemote> {
    const definition = resolveDefinition(entry.definition);
    const client = new RemoteClient(entry.name, definition, this.#options, this.#transport.post, this.#hooks);
    const started = performance.now();
    const introspection = await client.introspect();
    // Building a schema of thousands of types takes a while: yield between the steps so that
    // requests being served are not held up by one long block.
    await yieldToEventLoop();
    const own = await buildUncheckedRemoteSchemaInSlices(entry.name, introspection);
    await yieldToEventLoop();
    checkRemoteSchema(entry.name, own);
    let remoteSchema = own;
    checkDistinctNames(remoteSchema, definition.customization);
    const scalars = builtInScalarMapping(definition.customization?.type_names?.mapping);
    let executor = client.executor;
    if (scalars.size > 0) {
      // Built-in scalars are renamed in the introspection result (see builtin-scalars.ts).
      remoteSchema = buildRemoteSchema(entry.name, renameInIntrospection(introspection, scalars));
      executor = restoreInRequests(executor, scalars);
    }
    await yieldToEventLoop();
    const renamed = new Set(scalars.values());
    const publicOf = (part: GraphQLSchema) => publicRemoteSchema(part, executor, definition.customization, renamed);
    const publicSchema = publicOf(remoteSchema);
    this.#options.logger.debug(
      `remote schema "${entry.name}": ${Object.keys(remoteSchema.getTypeMap()).length} types loaded in ${Math.round(performance.now() - started)} ms`,
    );
    return {
      name: entry.name,
      key,
      client,
      introspection,
      own,
      base: remoteSchema,
      public: publicSchema,
      publicOf,
      forwardable: definition.customization === undefined,
    };
  }

  commit(plan: RegistryPlan): void {
    const state = this.#plans.get(plan);
    if (!state) throw new TypeError('commit() expects a plan returned by plan() of this registry');
    if (this.#disposed) throw new Error('the remote schema registry is disposed');
    this.#commits++;
    this.#swap(state);
    this.#scheduleRetries(state);
  }

  #swap(state: State): void {
    const previous = this.#live;
    this.#live = state;
    for (const remote of state.loaded.values()) this.#clients.add(remote.client);
    const names = new Set(state.entries.map((e) => e.name));
    for (const [name, remote] of previous.loaded) {
      const next = state.loaded.get(name);
      if (next?.client === remote.client) continue;
      // A replaced remote's subscriptions keep running on the old client, which closes its sockets
      // when the last of them leaves and then leaves `#clients` (`#hooks.onIdle`).
      if (names.has(name) && remote.client.subscriptions.size === 0) this.#clients.delete(remote.client);
    }
    // A removed remote's subscriptions end now: on its last client and on every older one still
    // serving subscriptions opened before an update.
    for (const client of [...this.#clients]) {
      if (names.has(client.name)) continue;
      this.#clients.delete(client);
      void client.dispose(true);
    }
    for (const listener of this.#listeners) {
      try {
        listener(state.schema);
      } catch (error) {
        this.#options.logger.error('remote schemas: a schema change listener failed:', error);
      }
    }
    try {
      this.#options.hooks.onSchemaSwap?.({ remoteSchemas: state.entries.map((entry) => entry.name) });
    } catch (error) {
      this.#options.logger.error('remote schemas: the onSchemaSwap hook failed:', error);
    }
  }

  #scheduleRetries(state: State): void {
    const failing = new Map(
      state.problems.filter((p) => p.code === 'remote-schema-error').map((p) => [p.name, p]),
    );
    for (const [name, retry] of this.#retries) {
      if (!failing.has(name)) {
        clearTimeout(retry.timer);
        this.#retries.delete(name);
      }
    }
    if (this.#options.retry === false) return;
    for (const entry of state.entries) {
      if (!failing.has(entry.name)) continue;
      const key = keyOf(entry);
      const existing = this.#retries.get(entry.name);
      if (existing) clearTimeout(existing.timer);
      this.#schedule(entry.name, key, this.#options.retry.initialDelayMs);
    }
  }

  #schedule(name: string, key: string, delayMs: number): void {
    const timer = setTimeout(() => {
      this.#retryChain = this.#retryChain.then(() => this.#retry(name, key, delayMs));
    }, delayMs);
    timer.unref?.();
    this.#retries.set(name, { key, delayMs, timer });
  }

  async #retry(name: string, key: string, delayMs: number): Promise<void> {
    const retry = this.#retries.get(name);
    if (this.#disposed || !retry || retry.key !== key) return;
    const live = this.#live;
    const commits = this.#commits;
    this.#options.logger.info(`remote schema "${name}": retrying`);
    let plan: RegistryPlan;
    try {
      plan = await this.#plan(live.entries, { attemptOnly: new Set([name]) });
    } catch (error) {
      this.#options.logger.error(`remote schema "${name}": retry failed:`, error);
      return;
    }
    // A commit while we waited decided anew (and scheduled its own retries).
    if (this.#disposed || commits !== this.#commits || this.#live !== live) return;
    const state = this.#plans.get(plan);
    const problem = plan.problems.find((p) => p.name === name && isRemoteProblem(p));
    if (state && problem?.code !== 'remote-schema-error') {
      this.#retries.delete(name);
      if (problem) {
        this.#options.logger.warn(`remote schema "${name}" answers again but cannot be added: ${redactUrls(problem.message)}`);
      } else {
        this.#options.logger.info(`remote schema "${name}" is back and stitched in`);
      }
      this.#swap(state);
      return;
    }
    const maxDelayMs = this.#options.retry === false ? delayMs : this.#options.retry.maxDelayMs;
    const next = Math.min(delayMs * 2, maxDelayMs);
    const reason = problem ? redactUrls(problem.message) : 'unknown';
    this.#options.logger.warn(`remote schema "${name}" is still unavailable (${reason}); next retry in ${next} ms`);
    this.#schedule(name, key, next);
  }

  problems(): readonly RemoteSchemaProblem[] {
    return this.#live.problems;
  }

  async introspect(name: string): Promise<ExecutionResult> {
    const loaded = this.#live.loaded.get(name);
    if (loaded) return loaded.introspection;
    const entry = this.#live.entries.find((e) => e.name === name);
    if (!entry) throw new RemoteSchemaError('remote-schema-error', `remote schema "${name}" is not loaded`);
    const client = new RemoteClient(name, resolveDefinition(entry.definition), this.#options, this.#transport.post);
    return client.introspect();
  }

  /** For tests and diagnostics: see `cachedRoleSchemaCount`. */
  get cachedRoleSchemaCount(): number {
    return this.#live.roles?.size ?? 0;
  }

  /** For tests and diagnostics: see `keptClientCount`. */
  get keptClientCount(): number {
    return this.#clients.size;
  }

  async dispose(): Promise<void> {
    if (this.#disposed) return;
    this.#disposed = true;
    for (const retry of this.#retries.values()) clearTimeout(retry.timer);
    this.#retries.clear();
    this.#listeners.clear();
    const clients = [...this.#clients];
    this.#clients.clear();
    await Promise.all(clients.map((c) => c.dispose()));
    this.#transport.dispose();
  }
}

/**
 * For tests and diagnostics (not exported by the package): how many remote clients `registry` keeps,
 * live ones and retired ones with open subscriptions.
 */
export function keptClientCount(registry: RemoteSchemaRegistry): number {
  return (registry as Partial<Diagnosable>)[WORKINGS]?.keptClientCount ?? 0;
}

/** For tests and diagnostics (not exported by the package): role schemas cached for the live state. */
export function cachedRoleSchemaCount(registry: RemoteSchemaRegistry): number {
  return (registry as Partial<Diagnosable>)[WORKINGS]?.cachedRoleSchemaCount ?? 0;
}

/** The diagnostics above read the registry behind a public face through this member. */
const WORKINGS = Symbol('remote schema registry workings');
interface Diagnosable {
  [WORKINGS]: Registry;
}

/**
 * What clients of the package get: members that never read `this`, so that a `Proxy` of the
 * registry, an object made with `Object.create`, or a decorator's call through a borrowed method
 * reaches the registry as a call on the registry itself would (class members with private fields
 * throw when called on anything but the instance).
 */
function publicFace(registry: Registry, logger: Logger): RemoteSchemaRegistry {
  const face: RemoteSchemaRegistry & Diagnosable = {
    get schema() {
      return registry.schema;
    },
    permissions: registry.permissions,
    logger,
    schemaFor: (session) => registry.schemaFor(session),
    onSchemaChange: (listener) => registry.onSchemaChange(listener),
    plan: (desired, options) => registry.plan(desired, options),
    commit: (plan) => registry.commit(plan),
    problems: () => registry.problems(),
    introspect: (name) => registry.introspect(name),
    dispose: () => registry.dispose(),
    [WORKINGS]: registry,
  };
  return face;
}

/**
 * Creates the registry of remote schemas: `plan()` introspects and composes off to the side,
 * `commit()` swaps the live schema at once. Misconfiguration throws a `TypeError` naming the option.
 */
export function createRemoteSchemaRegistry(options?: RemoteSchemaRegistryOptions): RemoteSchemaRegistry {
  const normalized = normalizeOptions(options);
  return publicFace(new Registry(normalized), normalized.logger);
}
