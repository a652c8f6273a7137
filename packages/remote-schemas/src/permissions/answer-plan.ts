import {
  Kind,
  getOperationAST,
  isAbstractType,
  isCompositeType,
  isEnumType,
  isListType,
  isNonNullType,
  isObjectType,
  isSpecifiedScalarType,
  visit,
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLCompositeType,
  type GraphQLObjectType,
  type GraphQLOutputType,
  type GraphQLSchema,
  type SelectionSetNode,
} from 'graphql';
import { answerRulesOf, type AnswerRules } from './answer-rules.js';
import type { RoleGrant } from './grant.js';

/**
 * What to check at one place of an answer, following the field's type: `nonNull`, then a list of
 * `item`s, or a named type (an enum the role sees part of, an enum or built-in scalar, or an
 * object with checks below). A value of another kind there (a list where one value belongs, an
 * object where a scalar does, a scalar where an object does) is not one of the role's schema.
 */
export interface TypeCheck {
  readonly nonNull: boolean;
  readonly item?: TypeCheck;
  /** A narrowed enum: the values the role sees. */
  readonly values?: ReadonlySet<string>;
  /** An enum or a built-in scalar: a single value, never an object or a list. */
  readonly leaf?: true;
  readonly shape?: Shape;
}

/** A field of an object with a check at or below it. */
export interface FieldCheck {
  /** Its response key. */
  readonly key: string;
  readonly check: TypeCheck;
}

/** The checks of an object in the answer. */
export interface Shape {
  /**
   * The response keys the document selects on it (on an interface or union, on any runtime type
   * the role sees): any other key the remote answers is left out.
   */
  readonly keys: ReadonlySet<string>;
  /**
   * The response keys of the `__typename` fields selected on it, and the runtime types (the
   * remote's own names) they may name: another name (a type the role does not see, or not a type
   * of this place at all) makes the object one the role may not see.
   */
  readonly typenames?: { readonly keys: readonly string[]; readonly names: ReadonlySet<string> };
  /** Where the object's runtime type name is; set when the checks depend on it. */
  readonly typename?: string;
  /** The gateway asked for `typename` itself: it leaves the answer once read. */
  readonly injected?: boolean;
  /** Set for a narrowed interface or union: the runtime types the role sees as its members. */
  readonly allowed?: ReadonlySet<string>;
  /** An object type's fields with checks (a concrete type). */
  readonly fields?: readonly FieldCheck[];
  /** An abstract type's fields with checks, by runtime type (types without any are left out). */
  readonly byType?: ReadonlyMap<string, readonly FieldCheck[]>;
}

/** The checks of one document's answers for one role on one remote, compiled once. */
export interface AnswerPlan {
  /** The document to send: the given one, or a copy that also asks `__typename` where a check needs it. */
  readonly document: DocumentNode;
  /** The checks of `data`. */
  readonly root: Shape;
}

interface Cached {
  readonly operationName: string | null | undefined;
  readonly plan: AnswerPlan | null;
}

/** document -> grant -> its plan (`null`: nothing to check). Documents are the parser cache's, or a plan's. */
const plans = new WeakMap<DocumentNode, WeakMap<RoleGrant, Cached>>();

/**
 * The checks of the answers to `document` (in the remote's own names) for a role with `grant` on
 * `remote` (its own schema): the response keys of every object (a key the document does not
 * select is left out, whatever the remote sends), the `__typename` values it may hold, and the
 * places that can hold an enum value or a runtime type the role does not see. Compiled once per
 * (document, grant). `undefined`: no such operation in the document.
 */
export function answerPlanFor(
  document: DocumentNode,
  operationName: string | null | undefined,
  grant: RoleGrant,
  remote: GraphQLSchema,
): AnswerPlan | undefined {
  const rules = answerRulesOf(grant, remote);
  let byGrant = plans.get(document);
  if (!byGrant) plans.set(document, (byGrant = new WeakMap()));
  let cached = byGrant.get(grant);
  if (!cached || cached.operationName !== operationName) {
    cached = { operationName, plan: new Compiler(document, remote, rules).compile(operationName) };
    byGrant.set(grant, cached);
  }
  return cached.plan ?? undefined;
}

/** The response keys selected on an object: all of them, those of `__typename`, those of other fields. */
interface Keys {
  readonly all: Set<string>;
  readonly typenames: Set<string>;
  readonly fields: Set<string>;
}

function newKeys(): Keys {
  return { all: new Set(), typenames: new Set(), fields: new Set() };
}

/**
 * The `typenames` of a shape whose runtime types are `names`: the keys that are `__typename`
 * wherever they are selected (a key that is a field on another runtime type says nothing of it).
 */
function typenamesOf(found: Keys, names: readonly string[]): Pick<Shape, 'typenames'> {
  const keys = [...found.typenames].filter((key) => !found.fields.has(key));
  return keys.length > 0 ? { typenames: { keys, names: new Set(names) } } : {};
}

class Compiler {
  readonly #document: DocumentNode;
  readonly #remote: GraphQLSchema;
  readonly #rules: AnswerRules;
  readonly #fragments = new Map<string, FragmentDefinitionNode>();
  /** Selection sets that get a `__typename` of the gateway's own. */
  readonly #inject = new Set<SelectionSetNode>();
  #alias: string | undefined;

  constructor(document: DocumentNode, remote: GraphQLSchema, rules: AnswerRules) {
    this.#document = document;
    this.#remote = remote;
    this.#rules = rules;
    for (const definition of document.definitions) {
      if (definition.kind === Kind.FRAGMENT_DEFINITION) this.#fragments.set(definition.name.value, definition);
    }
  }

  compile(operationName: string | null | undefined): AnswerPlan | null {
    const operation = getOperationAST(this.#document, operationName);
    if (!operation) return null;
    const root = this.#remote.getRootType(operation.operation);
    if (!root) return null;
    const keys = newKeys();
    const fields = this.#fieldChecks([operation.selectionSet], root, keys);
    return { document: this.#inject.size > 0 ? this.#injected() : this.#document, root: { keys: keys.all, ...(fields.length > 0 ? { fields } : {}) } };
  }

  /** The checks of the fields `sets` select on an object of runtime type `type`; their response keys are added to `keys`. */
  #fieldChecks(sets: readonly SelectionSetNode[], type: GraphQLObjectType, keys: Keys): FieldCheck[] {
    const grouped = new Map<string, FieldNode[]>();
    for (const set of sets) this.#collect(set, type, grouped, new Set());
    const checks: FieldCheck[] = [];
    const definitions = type.getFields();
    for (const [key, nodes] of grouped) {
      keys.all.add(key);
      (nodes[0]!.name.value === '__typename' ? keys.typenames : keys.fields).add(key);
      const definition = definitions[nodes[0]!.name.value];
      // `__typename` and fields the remote does not have (its own validation answers those).
      if (!definition) continue;
      const check = this.#typeCheck(definition.type, nodes);
      if (check) checks.push({ key, check });
    }
    return checks;
  }

  /** The fields of `set` that apply to runtime type `type`, by response key (fragments spread in place). */
  #collect(set: SelectionSetNode, type: GraphQLObjectType, out: Map<string, FieldNode[]>, spread: Set<string>): void {
    for (const selection of set.selections) {
      if (selection.kind === Kind.FIELD) {
        const key = selection.alias?.value ?? selection.name.value;
        const known = out.get(key);
        if (known) known.push(selection);
        else out.set(key, [selection]);
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        if (!selection.typeCondition || this.#applies(selection.typeCondition.name.value, type)) {
          this.#collect(selection.selectionSet, type, out, spread);
        }
      } else {
        const name = selection.name.value;
        const fragment = this.#fragments.get(name);
        if (spread.has(name) || !fragment || !this.#applies(fragment.typeCondition.name.value, type)) continue;
        spread.add(name);
        this.#collect(fragment.selectionSet, type, out, spread);
      }
    }
  }

  #applies(condition: string, type: GraphQLObjectType): boolean {
    if (condition === type.name) return true;
    const named = this.#remote.getType(condition);
    return named !== undefined && isAbstractType(named) && this.#remote.isSubType(named, type);
  }

  #typeCheck(type: GraphQLOutputType, nodes: readonly FieldNode[]): TypeCheck | undefined {
    if (isNonNullType(type)) {
      const inner = this.#typeCheck(type.ofType, nodes);
      return inner && { ...inner, nonNull: true };
    }
    if (isListType(type)) {
      const item = this.#typeCheck(type.ofType, nodes);
      return item && { nonNull: false, item };
    }
    const values = this.#rules.enums.get(type.name);
    if (values) return { nonNull: false, values };
    // A custom scalar may be anything (a JSON scalar holds objects and lists): not checked.
    if (isEnumType(type) || isSpecifiedScalarType(type)) return { nonNull: false, leaf: true };
    if (!isCompositeType(type)) return undefined;
    return { nonNull: false, shape: this.#shape(type, nodes) };
  }

  #shape(type: GraphQLCompositeType, nodes: readonly FieldNode[]): Shape {
    const sets = nodes.flatMap((node) => (node.selectionSet ? [node.selectionSet] : []));
    const keys = newKeys();
    if (isObjectType(type)) {
      const fields = this.#fieldChecks(sets, type, keys);
      return { keys: keys.all, ...typenamesOf(keys, [type.name]), ...(fields.length > 0 ? { fields } : {}) };
    }
    const allowed = this.#rules.abstracts.get(type.name);
    const byType = new Map<string, readonly FieldCheck[]>();
    const members: string[] = [];
    for (const member of this.#remote.getPossibleTypes(type)) {
      // A runtime type the role does not see leaves the answer whatever is below it.
      if (allowed && !allowed.has(member.name)) continue;
      members.push(member.name);
      const fields = this.#fieldChecks(sets, member, keys);
      if (fields.length > 0) byType.set(member.name, fields);
    }
    const shape: Shape = { keys: keys.all, ...typenamesOf(keys, members) };
    if (!allowed && byType.size === 0) return shape;
    return { ...shape, ...this.#typename(nodes), ...(allowed ? { allowed } : {}), ...(byType.size > 0 ? { byType } : {}) };
  }

  /**
   * Where the runtime type of the objects `nodes` select is read: the client's own `__typename`
   * when the one field selects it without condition, else one the gateway adds to each of them.
   */
  #typename(nodes: readonly FieldNode[]): { typename: string; injected?: true } {
    if (nodes.length === 1) {
      for (const selection of nodes[0]!.selectionSet?.selections ?? []) {
        if (selection.kind === Kind.FIELD && selection.name.value === '__typename' && !selection.directives?.length) {
          return { typename: selection.alias?.value ?? '__typename' };
        }
      }
    }
    for (const node of nodes) if (node.selectionSet) this.#inject.add(node.selectionSet);
    return { typename: this.#aliasName(), injected: true };
  }

  /** A response key no field of the document uses, the same for every place it is added. */
  #aliasName(): string {
    if (this.#alias !== undefined) return this.#alias;
    const used = new Set<string>();
    visit(this.#document, {
      Field(node) {
        used.add(node.alias?.value ?? node.name.value);
      },
    });
    let alias = 'svc_typename';
    for (let n = 2; used.has(alias); n++) alias = `svc_typename_${n}`;
    this.#alias = alias;
    return alias;
  }

  #injected(): DocumentNode {
    const typename: FieldNode = {
      kind: Kind.FIELD,
      alias: { kind: Kind.NAME, value: this.#aliasName() },
      name: { kind: Kind.NAME, value: '__typename' },
    };
    const inject = this.#inject;
    return visit(this.#document, {
      SelectionSet(node) {
        return inject.has(node) ? { ...node, selections: [...node.selections, typename] } : undefined;
      },
    });
  }
}
