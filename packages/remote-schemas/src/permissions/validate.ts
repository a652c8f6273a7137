import {
  Kind,
  isEnumType,
  isInputObjectType,
  isInterfaceType,
  isListType,
  isNonNullType,
  isObjectType,
  isScalarType,
  isUnionType,
  print,
  type ConstDirectiveNode,
  type DocumentNode,
  type GraphQLNamedType,
  type GraphQLSchema,
  type GraphQLType,
  type TypeNode,
} from 'graphql';
import { BUILT_IN_SCALARS } from '../builtin-scalars.js';
import { englishList, repeatedNames, unique } from './english.js';
import type { FieldGrant, RoleGrant, TypeGrant } from './grant.js';
import { InputValueChecker, type InputValueOwner } from './input-values.js';
import {
  DEFAULT_ROOT_NAMES,
  KIND_LABELS,
  OPERATIONS,
  collectDefinitions,
  parseRoleSchema,
  type Definitions,
  type Operation,
  type RoleType,
  type RoleTypeKind,
} from './role-sdl.js';

export interface ValidateRoleSchemaOptions {
  /**
   * A `@preset` string value starting with this prefix (compared case-insensitively) names a
   * session variable, unless the directive says `static: true`.
   */
  sessionVariablePrefix: string;
}

export type RoleSchemaValidation = { ok: true; grant: RoleGrant } | { ok: false; message: string };

/**
 * Checks that a role's SDL is a subset of a remote's schema and turns it into the role's grant, in
 * the remote's own names.
 *
 * The comparison is by meaning: descriptions, directives other than `@preset`, the order of
 * definitions and the way a value is written do not matter. `@preset(value: …, static: Boolean)` is
 * understood on arguments and input fields without being declared.
 *
 * Root types: the role's roots are the types named by its `schema { … }` block (with any
 * `extend schema`). Without one, for each operation the remote has a root for, the role's root is
 * its type called `Query` / `Mutation` / `Subscription`, or else its type called like the remote's
 * root (`query_root`); for an operation the remote has no root for, a type with the default name is
 * an ordinary type. The role's root of an operation stands for the remote's root of that operation
 * whatever either is called, so `type Query` grants fields of a remote's `query_root` and the grant
 * names it `query_root`. A type named like one of the remote's roots can only be given as that
 * root. The role must have a query root.
 *
 * Every problem found is reported, in one message laid out as Hasura lays it out.
 */
export function validateRoleSchema(
  remote: GraphQLSchema,
  sdl: string,
  options: ValidateRoleSchemaOptions,
): RoleSchemaValidation {
  const prefix = options.sessionVariablePrefix;
  if (typeof prefix !== 'string' || prefix === '') {
    throw new TypeError('validateRoleSchema: "sessionVariablePrefix" must be a non-empty string');
  }
  const reasons = new Set<string>();
  const document = parseRoleSchema(sdl, reasons);
  const grant = document && new RoleSchemaChecker(remote, document, prefix.toLowerCase(), reasons).check();
  if (reasons.size === 0 && grant) return { ok: true, grant };
  return { ok: false, message: validationMessage([...reasons]) };
}

function validationMessage(reasons: readonly string[]): string {
  const head = 'validation for the given role-based schema failed';
  if (reasons.length === 1) return `${head} because ${reasons[0]}`;
  return `${head} for the following reasons:\n${reasons.map((reason) => ` • ${reason}\n`).join('')}`;
}

class RoleSchemaChecker {
  private readonly toRemoteName = new Map<string, string>();
  private readonly usedBuiltInScalars = new Set<string>();
  private readonly inputs: InputValueChecker;

  constructor(
    private readonly remote: GraphQLSchema,
    private readonly document: DocumentNode,
    prefix: string,
    private readonly reasons: Set<string>,
  ) {
    this.inputs = new InputValueChecker({ reasons, prefix, sameTypeReference: (node, type) => this.sameTypeReference(node, type) });
  }

  check(): RoleGrant {
    const definitions = collectDefinitions(this.document, this.reasons);
    const roots = this.resolveRoots(definitions);
    for (const directive of definitions.schemaDirectives) this.misplacedPreset(directive, 'the schema definition');

    const types = new Map<string, TypeGrant>();
    for (const type of definitions.types.values()) {
      // Two role types can only stand for one remote type through a root, which checkRootName refuses.
      this.checkRootName(type, roots);
      const grant = this.checkType(type);
      this.checkCoherence(type, definitions.types);
      const remoteName = this.remoteName(type.name);
      if (grant && !types.has(remoteName)) types.set(remoteName, grant);
    }
    for (const name of this.usedBuiltInScalars) if (!types.has(name)) types.set(name, { kind: 'scalar' });

    const grantRoots: Partial<Record<Operation, string>> = {};
    for (const operation of OPERATIONS) {
      const name = roots.get(operation);
      if (name !== undefined) grantRoots[operation] = this.remoteName(name);
    }
    return { types, roots: grantRoots, hasPresets: this.inputs.hasPresets };
  }

  // ---- root types ----------------------------------------------------------------------------

  private resolveRoots(definitions: Definitions): Map<Operation, string> {
    const remoteRoots = remoteRootNames(this.remote);
    const roots = new Map<Operation, string>();
    for (const operation of OPERATIONS) {
      let name: string | undefined;
      if (definitions.schemaRoots) {
        name = definitions.schemaRoots.get(operation);
      } else {
        // Without a schema block, a remote with no root for an operation may well have an ordinary
        // type called like that root (a billing `Subscription`): the role's type is that one.
        const defaultName = DEFAULT_ROOT_NAMES[operation];
        const remoteName = remoteRoots.get(operation);
        if (remoteName === undefined) continue;
        if (definitions.types.has(defaultName)) name = defaultName;
        else if (definitions.types.has(remoteName)) name = remoteName;
      }
      if (name === undefined) continue;
      roots.set(operation, name);
      if (!definitions.types.has(name)) {
        this.reasons.add(`the ${operation} root "${name}" is not defined in the schema`);
      }
      const remoteName = remoteRoots.get(operation);
      if (remoteName === undefined) {
        this.reasons.add(`the upstream remote schema has no ${operation} root, but "${name}" is given as one`);
        continue;
      }
      const earlier = this.toRemoteName.get(name);
      if (earlier !== undefined && earlier !== remoteName) {
        this.reasons.add(`"${name}" is given as the root of more than one operation, but the upstream remote schema has different roots for them`);
        continue;
      }
      this.toRemoteName.set(name, remoteName);
    }
    if (!roots.has('query')) this.reasons.add('query root does not exist in the schema definition');
    return roots;
  }

  /** A remote root can only be granted as the role's root of that operation. */
  private checkRootName(type: RoleType, roots: Map<Operation, string>): void {
    const remoteName = this.remoteName(type.name);
    const operations = [...remoteRootNames(this.remote)].filter(([, rootName]) => rootName === remoteName).map(([operation]) => operation);
    const [operation] = operations;
    if (operation && !operations.some((candidate) => roots.get(candidate) === type.name)) {
      this.reasons.add(`"${type.name}" is the ${operation} root of the upstream remote schema, so it can only be given as the ${operation} root`);
    }
  }

  private remoteName(roleName: string): string {
    return this.toRemoteName.get(roleName) ?? roleName;
  }

  // ---- the role's SDL on its own -------------------------------------------------------------

  private checkCoherence(type: RoleType, types: Map<string, RoleType>): void {
    const where = `the "${KIND_LABELS[type.kind]}": "${type.name}"`;
    const reference = (node: TypeNode, place: string) => {
      const name = namedTypeOf(node);
      if (BUILT_IN_SCALARS.has(name)) this.usedBuiltInScalars.add(name);
      else if (!types.has(name)) this.reasons.add(`type "${name}" used by ${place} is not defined in the schema`);
    };
    for (const field of type.fields) {
      reference(field.type, `the field "${field.name.value}" of ${where}`);
      for (const arg of field.arguments ?? []) {
        reference(arg.type, `the argument "${arg.name.value}" of the field "${field.name.value}" of ${where}`);
      }
    }
    for (const field of type.inputFields) reference(field.type, `the field "${field.name.value}" of ${where}`);
    for (const member of type.members) reference(member, where);
    for (const iface of type.interfaces) reference(iface, where);

    // graphql-js would refuse to build the role's schema with an empty type.
    const parts = {
      object: ['fields', type.fields],
      interface: ['fields', type.fields],
      input: ['fields', type.inputFields],
      enum: ['values', type.values],
      union: ['member types', type.members],
      scalar: undefined,
    } as const;
    const part = parts[type.kind];
    if (part && part[1].length === 0) this.reasons.add(`${where} must define one or more ${part[0]}`);

    this.checkImplementations(type, types);
  }

  /** What GraphQL asks of a type that implements an interface, within the role's SDL. */
  private checkImplementations(type: RoleType, types: Map<string, RoleType>): void {
    const label = type.kind === 'object' ? 'object' : 'interface';
    const declared = new Set(type.interfaces.map((node) => node.name.value));
    for (const name of declared) {
      const iface = types.get(name);
      if (!iface || iface.kind !== 'interface') continue;
      for (const inherited of iface.interfaces) {
        const transitive = inherited.name.value;
        if (transitive !== type.name && !declared.has(transitive)) {
          this.reasons.add(`${label} "${type.name}" must also implement "${transitive}", which its interface "${name}" implements`);
        }
      }
      const fields = new Map(type.fields.map((field) => [field.name.value, field]));
      for (const expected of iface.fields) {
        const field = fields.get(expected.name.value);
        if (!field) {
          this.reasons.add(`${label} "${type.name}" does not have the field "${expected.name.value}" of its interface "${name}"`);
          continue;
        }
        const args = new Set((field.arguments ?? []).map((arg) => arg.name.value));
        for (const arg of expected.arguments ?? []) {
          if (!args.has(arg.name.value)) {
            this.reasons.add(
              `the field "${field.name.value}" of the ${label} "${type.name}" does not have the argument "${arg.name.value}" of its interface "${name}"`,
            );
          }
        }
      }
    }
  }

  // ---- the role's SDL against the remote -----------------------------------------------------

  private checkType(type: RoleType): TypeGrant | undefined {
    for (const directive of type.directives) this.misplacedPreset(directive, `the "${KIND_LABELS[type.kind]}": "${type.name}"`);
    if (type.kind === 'scalar' && BUILT_IN_SCALARS.has(type.name)) return undefined;

    const upstream = type.name.startsWith('__') ? undefined : this.remote.getType(this.remoteName(type.name));
    if (!upstream || kindOf(upstream) !== type.kind) {
      this.reasons.add(`"${KIND_LABELS[type.kind]}": "${type.name}" does not exist in the upstream remote schema`);
      this.checkPresetsOnly(type);
      return undefined;
    }
    const label = KIND_LABELS[type.kind];
    this.checkDuplicates(type);

    if ((isObjectType(upstream) || isInterfaceType(upstream)) && (type.kind === 'object' || type.kind === 'interface')) {
      const upstreamFields = upstream.getFields();
      const fields = new Map<string, FieldGrant>();
      for (const field of type.fields) {
        const name = field.name.value;
        const where = `the field "${name}" of the "${label}": "${type.name}"`;
        for (const directive of field.directives ?? []) this.misplacedPreset(directive, where);
        const owner: InputValueOwner = { kind: 'field', field: name, parentLabel: label, parent: type.name };
        const upstreamField = upstreamFields[name];
        if (!upstreamField) {
          this.reasons.add(`field "${name}" does not exist in the "${label}": "${type.name}"`);
          this.inputs.check(owner, field.arguments ?? [], undefined);
          continue;
        }
        if (!this.sameTypeReference(field.type, upstreamField.type)) {
          this.reasons.add(
            `expected type of "${name}"("${label} field") to be ${String(upstreamField.type)} but received ${print(field.type)}`,
          );
        }
        fields.set(name, { args: this.inputs.check(owner, field.arguments ?? [], upstreamField.args) });
      }
      const upstreamInterfaces = new Set(upstream.getInterfaces().map((iface) => iface.name));
      const interfaces = type.interfaces.map((node) => this.remoteName(node.name.value));
      const foreign = unique(interfaces.filter((name) => !upstreamInterfaces.has(name)));
      if (foreign.length > 0) {
        this.reasons.add(
          `${type.kind} "${type.name}" is trying to implement the following interfaces that do not exist in the corresponding upstream remote ${type.kind}: ${englishList(foreign)}`,
        );
      }
      return { kind: type.kind, fields, interfaces: unique(interfaces) };
    }

    if (isInputObjectType(upstream)) {
      const fields = this.inputs.check({ kind: 'input', parent: type.name }, type.inputFields, Object.values(upstream.getFields()));
      return { kind: 'input', fields };
    }

    if (isEnumType(upstream)) {
      const values = new Set<string>();
      const foreign: string[] = [];
      for (const value of type.values) {
        for (const directive of value.directives ?? []) {
          this.misplacedPreset(directive, `the enum value "${value.name.value}" of the "Enum": "${type.name}"`);
        }
        if (upstream.getValue(value.name.value)) values.add(value.name.value);
        else foreign.push(value.name.value);
      }
      if (foreign.length > 0) {
        this.reasons.add(
          `enum "${type.name}" contains the following enum values that do not exist in the corresponding upstream remote enum: ${englishList(unique(foreign))}`,
        );
      }
      return { kind: 'enum', values };
    }

    if (isUnionType(upstream)) {
      const upstreamMembers = new Set(upstream.getTypes().map((member) => member.name));
      const members = unique(type.members.map((node) => this.remoteName(node.name.value)));
      const foreign = members.filter((name) => !upstreamMembers.has(name));
      if (foreign.length > 0) {
        this.reasons.add(
          `union "${type.name}" contains members which do not exist in the members of the remote schema union: ${englishList(foreign)}`,
        );
      }
      return { kind: 'union', members };
    }

    return { kind: 'scalar' };
  }

  private checkDuplicates(type: RoleType): void {
    const where = `the "${KIND_LABELS[type.kind]}": "${type.name}"`;
    const report = (what: string, names: readonly string[], place: string) => {
      const repeated = repeatedNames(names);
      if (repeated.length > 0) this.reasons.add(`duplicate ${what} ${englishList(repeated)} found in ${place}`);
    };
    report('fields', type.fields.map((field) => field.name.value), where);
    report('fields', type.inputFields.map((field) => field.name.value), where);
    report('enum values', type.values.map((value) => value.name.value), where);
    report('members', type.members.map((member) => member.name.value), where);
    report('interfaces', type.interfaces.map((iface) => iface.name.value), where);
    for (const field of type.fields) {
      report('arguments', (field.arguments ?? []).map((arg) => arg.name.value), `the field "${field.name.value}" of ${where}`);
    }
  }

  /** A type the remote does not have is not compared, but its presets are still looked at. */
  private checkPresetsOnly(type: RoleType): void {
    const label = KIND_LABELS[type.kind];
    for (const field of type.fields) {
      for (const directive of field.directives ?? []) {
        this.misplacedPreset(directive, `the field "${field.name.value}" of the "${label}": "${type.name}"`);
      }
      this.inputs.check({ kind: 'field', field: field.name.value, parentLabel: label, parent: type.name }, field.arguments ?? [], undefined);
    }
    this.inputs.check({ kind: 'input', parent: type.name }, type.inputFields, undefined);
    for (const value of type.values) {
      for (const directive of value.directives ?? []) {
        this.misplacedPreset(directive, `the enum value "${value.name.value}" of the "${label}": "${type.name}"`);
      }
    }
  }

  private misplacedPreset(directive: ConstDirectiveNode, place: string): void {
    if (directive.name.value !== 'preset') return;
    this.reasons.add(`Preset directives can be defined only on INPUT_FIELD_DEFINITION or ARGUMENT_DEFINITION, but one is on ${place}`);
  }

  /** Same list and non-null wrapping and the same named type (in the remote's names). */
  private sameTypeReference(node: TypeNode, type: GraphQLType): boolean {
    if (node.kind === Kind.NON_NULL_TYPE) return isNonNullType(type) && this.sameTypeReference(node.type, type.ofType);
    if (isNonNullType(type)) return false;
    if (node.kind === Kind.LIST_TYPE) return isListType(type) && this.sameTypeReference(node.type, type.ofType);
    if (isListType(type)) return false;
    return this.remoteName(node.name.value) === type.name;
  }
}

function remoteRootNames(schema: GraphQLSchema): Map<Operation, string> {
  const roots = new Map<Operation, string>();
  const query = schema.getQueryType();
  const mutation = schema.getMutationType();
  const subscription = schema.getSubscriptionType();
  if (query) roots.set('query', query.name);
  if (mutation) roots.set('mutation', mutation.name);
  if (subscription) roots.set('subscription', subscription.name);
  return roots;
}

function kindOf(type: GraphQLNamedType): RoleTypeKind {
  if (isObjectType(type)) return 'object';
  if (isInterfaceType(type)) return 'interface';
  if (isUnionType(type)) return 'union';
  if (isEnumType(type)) return 'enum';
  if (isInputObjectType(type)) return 'input';
  if (isScalarType(type)) return 'scalar';
  throw new TypeError(`unexpected GraphQL type ${String(type)}`);
}

function namedTypeOf(node: TypeNode): string {
  return node.kind === Kind.NAMED_TYPE ? node.name.value : namedTypeOf(node.type);
}

