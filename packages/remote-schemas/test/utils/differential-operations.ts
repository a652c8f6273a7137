import fc from 'fast-check';
import {
  GraphQLBoolean,
  GraphQLNonNull,
  Kind,
  Source,
  astFromValue,
  buildSchema,
  getLocation,
  getNamedType,
  isAbstractType,
  isCompositeType,
  isEnumType,
  isInputObjectType,
  isInterfaceType,
  isListType,
  isNonNullType,
  isObjectType,
  parse,
  print,
  validate,
  visit,
  type ASTNode,
  type GraphQLCompositeType,
  type GraphQLField,
  type GraphQLInputType,
  type GraphQLNamedType,
} from 'graphql';
import { sampleTypeDefs } from '@svc-graphql/sample-remotes';
import type { Naming, OperationKind } from './differential-customization.js';

/**
 * Operations over the sample remote, generated in the remote's own names, and what they become for
 * a client of a customized remote: the same document with types, fields and the namespace renamed,
 * and the remote's answer with the same renaming applied.
 */

export const remoteSchema = buildSchema(sampleTypeDefs);

/** Left out: its answer is the request's headers, which differ between the gateway's call and ours. */
const EXCLUDED_FIELDS: ReadonlySet<string> = new Set(['Query.echoHeaders']);
const MAX_DEPTH = 3;

// ---- What fast-check generates (shrinks well: plain records and arrays) ----

export type Value =
  | { kind: 'literal'; value: unknown }
  /**
   * `value` undefined: the variable is not sent (a nullable one, or one with a default).
   * `invalid`: a value of another type is sent instead, which the request is refused for.
   */
  | { kind: 'variable'; nonNull: boolean; value: unknown; defaultValue: unknown; invalid?: boolean }
  | { kind: 'object'; fields: Array<{ name: string; value: Value }> };

export interface Directive {
  name: 'include' | 'skip';
  value: Value;
}

export type Selection =
  | {
      kind: 'field';
      name: string;
      alias: boolean;
      args: Array<{ name: string; value: Value }>;
      directive: Directive | undefined;
      selections: Selection[] | undefined;
    }
  | { kind: 'typename'; alias: boolean; directive: Directive | undefined }
  | { kind: 'inline'; on: string | undefined; directive: Directive | undefined; selections: Selection[] }
  | { kind: 'spread'; on: string; directive: Directive | undefined; selections: Selection[] };

export interface Operation {
  kind: OperationKind;
  /** Named `Main`, sent with `operationName`, and with a second operation in the document. */
  named: boolean;
  decoy: boolean;
  selections: Selection[];
  /** Every root field left out: the root selections inside `... @skip(if: true) { }` (or `@include(if: false)`). */
  skipRoots?: Directive | undefined;
}

const STRINGS = ['', 'a', 'Ada', 'lin', 'o', 'é', 'quote " and \\ backslash', '😀', 'two\nlines'];
const IDS = ['1', '2', '3', 'p1', 'p2', '404'];

/** `true` in about one run in `n`. */
function oneIn(n: number): fc.Arbitrary<boolean> {
  return fc.oneof({ weight: n - 1, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) });
}

function sometimes<T>(arb: fc.Arbitrary<T>, percent: number): fc.Arbitrary<T | undefined> {
  return fc.oneof({ weight: 100 - percent, arbitrary: fc.constant(undefined) }, { weight: percent, arbitrary: arb });
}

/** A value of `type` as JSON (enum values by name), for a literal or a variable. */
function jsonArb(type: GraphQLInputType): fc.Arbitrary<unknown> {
  if (isNonNullType(type)) return namedJsonArb(type.ofType);
  const inner = namedJsonArb(type);
  return fc.oneof({ weight: 1, arbitrary: fc.constant(null) }, { weight: 6, arbitrary: inner });
}

function namedJsonArb(type: GraphQLInputType): fc.Arbitrary<unknown> {
  if (isListType(type)) return fc.array(jsonArb(type.ofType), { maxLength: 2 });
  if (isEnumType(type)) return fc.constantFrom(...type.getValues().map((v) => v.name));
  if (isInputObjectType(type)) {
    const fields = Object.values(type.getFields());
    return fc.record(
      Object.fromEntries(fields.map((f) => [f.name, jsonArb(f.type)])),
      { requiredKeys: fields.filter((f) => isNonNullType(f.type)).map((f) => f.name) },
    );
  }
  switch ((type as GraphQLNamedType).name) {
    case 'String':
      return fc.constantFrom(...STRINGS);
    case 'ID':
      return fc.constantFrom(...IDS);
    case 'Int':
      return fc.constantFrom(0, 1, 2);
    case 'Boolean':
      return fc.boolean();
    default:
      throw new Error(`no values for input type ${String(type)}`);
  }
}

/**
 * A JSON value that is not a value of `type`, null aside: the request is refused before
 * execution, with graphql-js's message naming the variable and the type.
 */
function invalidJsonArb(type: GraphQLInputType): fc.Arbitrary<unknown> {
  const named = getNamedType(type);
  if (isInputObjectType(named)) return fc.constantFrom<unknown>({}, { text: 'x', unknown: 1 }, 'NOPE');
  if (isEnumType(named)) return fc.constantFrom<unknown>('NOPE', 3);
  if (named.name === 'String') return fc.constantFrom<unknown>(7, true, { a: 1 });
  if (named.name === 'ID') return fc.constantFrom<unknown>(true, 1.5, ['1']);
  return fc.constantFrom<unknown>('NOPE', 1.5, [1]);
}

function valueArb(type: GraphQLInputType): fc.Arbitrary<Value> {
  const nonNull = isNonNullType(type);
  const literal = jsonArb(type).map((value): Value => ({ kind: 'literal', value }));
  const variable = fc
    .record({
      declaredNonNull: nonNull ? fc.constant(true) : oneIn(3),
      value: jsonArb(type),
      sent: oneIn(3).map((notSent) => !notSent),
      defaultValue: sometimes(jsonArb(type), 40),
      invalid: sometimes(fc.record({ wrong: invalidJsonArb(type), asNull: oneIn(3) }), 6),
    })
    .map(({ declaredNonNull, value, sent, defaultValue, invalid }): Value => {
      if (invalid !== undefined) {
        // Sent, and not a value of its type (`null` for a non-null variable, now and then).
        const wrong = declaredNonNull && invalid.asNull ? null : invalid.wrong;
        return { kind: 'variable', nonNull: declaredNonNull, value: wrong, defaultValue: undefined, invalid: true };
      }
      // A non-null variable is always sent, with a non-null value; only a nullable one has a default.
      if (declaredNonNull) {
        return { kind: 'variable', nonNull: true, value: value ?? nonNullFallback(type), defaultValue: undefined };
      }
      return { kind: 'variable', nonNull: false, value: sent ? value : undefined, defaultValue };
    });
  const named = isNonNullType(type) ? type.ofType : type;
  if (isInputObjectType(named)) {
    const fields = Object.values(named.getFields());
    const object = fc
      .tuple(...fields.map((f) => (isNonNullType(f.type) ? valueArb(f.type) : sometimes(valueArb(f.type), 70))))
      .map((values): Value => ({
        kind: 'object',
        fields: fields.flatMap((f, i) => (values[i] === undefined ? [] : [{ name: f.name, value: values[i] }])),
      }));
    return fc.oneof(literal, variable, object);
  }
  return fc.oneof({ weight: 2, arbitrary: literal }, { weight: 1, arbitrary: variable });
}

function nonNullFallback(type: GraphQLInputType): unknown {
  const named = getNamedType(type);
  if (isInputObjectType(named)) return { text: 'fallback' };
  if (isEnumType(named)) return named.getValues()[0]?.name;
  return named.name === 'Int' ? 0 : named.name === 'Boolean' ? true : '1';
}

/** `@skip` or `@include` that leaves its selection out: a literal, or a variable given (or defaulting to) that value. */
export const skipAllArb: fc.Arbitrary<Directive> = fc
  .record({ name: fc.constantFrom('include' as const, 'skip' as const), variable: fc.boolean(), nonNull: fc.boolean() })
  .map(({ name, variable, nonNull }): Directive => {
    const value = name === 'skip';
    if (!variable) return { name, value: { kind: 'literal', value } };
    return nonNull
      ? { name, value: { kind: 'variable', nonNull: true, value, defaultValue: undefined } }
      : { name, value: { kind: 'variable', nonNull: false, value: undefined, defaultValue: value } };
  });

const directiveArb: fc.Arbitrary<Directive | undefined> = sometimes(
  fc.record({ name: fc.constantFrom('include' as const, 'skip' as const), value: valueArb(new GraphQLNonNull(GraphQLBoolean)) }),
  8,
);

function fieldsOf(type: GraphQLCompositeType): Array<GraphQLField<unknown, unknown>> {
  if (!isObjectType(type) && !isInterfaceType(type)) return [];
  return Object.values(type.getFields()).filter((f) => !EXCLUDED_FIELDS.has(`${type.name}.${f.name}`));
}

/** Types a fragment inside a selection on `type` may name: those that share a possible type with it. */
function fragmentTargets(type: GraphQLCompositeType): string[] {
  const roots = new Set([remoteSchema.getQueryType(), remoteSchema.getMutationType(), remoteSchema.getSubscriptionType()]);
  if (roots.has(type as never)) return [type.name];
  const possible = (t: GraphQLCompositeType) =>
    new Set(isAbstractType(t) ? remoteSchema.getPossibleTypes(t).map((p) => p.name) : [t.name]);
  const mine = possible(type);
  return Object.values(remoteSchema.getTypeMap())
    .filter((t): t is GraphQLCompositeType => isCompositeType(t) && !t.name.startsWith('__') && !roots.has(t as never))
    .filter((t) => [...possible(t)].some((name) => mine.has(name)))
    .map((t) => t.name);
}

const selectionsCache = new Map<string, fc.Arbitrary<Selection[]>>();

function selectionsArb(typeName: string, depth: number): fc.Arbitrary<Selection[]> {
  const key = `${typeName}/${depth}`;
  let arb = selectionsCache.get(key);
  if (!arb) {
    arb = fc.array(selectionArb(typeName, depth), { minLength: 1, maxLength: 3 });
    selectionsCache.set(key, arb);
  }
  return arb;
}

function selectionArb(typeName: string, depth: number): fc.Arbitrary<Selection> {
  const type = remoteSchema.getType(typeName) as GraphQLCompositeType;
  const choices: Array<fc.WeightedArbitrary<Selection>> = [];
  for (const field of fieldsOf(type)) {
    const named = getNamedType(field.type);
    const composite = isCompositeType(named);
    if (composite && depth >= MAX_DEPTH) continue;
    const args = fc.tuple(
      ...field.args.map((arg) =>
        isNonNullType(arg.type) ? valueArb(arg.type) : sometimes(valueArb(arg.type), 60),
      ),
    );
    choices.push({
      weight: 4,
      arbitrary: fc
        .record({
          alias: oneIn(4),
          args,
          directive: directiveArb,
          selections: composite ? selectionsArb(named.name, depth + 1) : fc.constant(undefined),
        })
        .map(({ alias, args: values, directive, selections }): Selection => ({
          kind: 'field',
          name: field.name,
          alias,
          args: field.args.flatMap((arg, i) => (values[i] === undefined ? [] : [{ name: arg.name, value: values[i] }])),
          directive,
          selections,
        })),
    });
  }
  choices.push({
    weight: 1,
    arbitrary: fc
      .record({ alias: fc.boolean(), directive: directiveArb })
      .map(({ alias, directive }): Selection => ({ kind: 'typename', alias, directive })),
  });
  if (depth < MAX_DEPTH) {
    for (const on of fragmentTargets(type)) {
      const selections = selectionsArb(on, depth + 1);
      choices.push({
        weight: 1,
        arbitrary: fc
          .record({ selections, directive: directiveArb, conditioned: fc.boolean() })
          .map(({ selections: s, directive, conditioned }): Selection =>
            // Without a type condition the fragment stays on the enclosing type.
            ({ kind: 'inline', on: conditioned || on !== typeName ? on : undefined, directive, selections: s }),
          ),
      });
      choices.push({
        weight: 1,
        arbitrary: fc
          .record({ selections, directive: directiveArb })
          .map(({ selections: s, directive }): Selection => ({ kind: 'spread', on, directive, selections: s })),
      });
    }
  }
  return fc.oneof(...choices);
}

/**
 * A query (four times in five) or a mutation of the sample remote: every field but `echoHeaders`,
 * arguments as literals, variables (some with defaults, some not sent) and input objects with
 * variables inside, aliases, `__typename`, inline fragments and named fragments (shared when equal)
 * on objects, the interface, the union and the root type, `@include`/`@skip`, and now and then a
 * second operation in the document.
 */
export const operationArb: fc.Arbitrary<Operation> = fc
  .record({
    kind: oneIn(5).map((mutation): OperationKind => (mutation ? 'mutation' : 'query')),
    named: fc.boolean(),
    decoy: oneIn(5),
    query: selectionsArb('Query', 0),
    mutation: selectionsArb('Mutation', 0),
    skipRoots: sometimes(skipAllArb, 8),
  })
  .map(({ kind, named, decoy, query, mutation, skipRoots }) => ({
    kind,
    named: named || decoy,
    decoy,
    selections: kind === 'query' ? query : mutation,
    skipRoots,
  }));

// ---- Resolved: aliases, variables and fragments named, valid on the remote's schema ----

type ResolvedValue =
  | { kind: 'literal'; text: string }
  | { kind: 'variable'; name: string }
  | { kind: 'object'; fields: Array<{ name: string; value: ResolvedValue }> };

interface ResolvedDirective {
  name: string;
  value: ResolvedValue;
}

type ResolvedSelection =
  | {
      kind: 'field';
      /** The (remote) type the field is selected on: field names are customized per type. */
      parent: string;
      name: string;
      alias: string | undefined;
      args: Array<{ name: string; value: ResolvedValue }>;
      directive: ResolvedDirective | undefined;
      selections: ResolvedSelection[] | undefined;
    }
  | { kind: 'typename'; alias: string | undefined; directive: ResolvedDirective | undefined }
  | { kind: 'inline'; on: string | undefined; directive: ResolvedDirective | undefined; selections: ResolvedSelection[] }
  | { kind: 'spread'; fragment: string; directive: ResolvedDirective | undefined };

interface VariableDefinition {
  name: string;
  type: GraphQLInputType;
  /** False for directive arguments: `@include(if:)` takes the built-in Boolean whatever the mapping. */
  renamed: boolean;
  defaultValue: string | undefined;
}

export interface ResolvedOperation {
  kind: OperationKind;
  /** A variable's value is not one of its type: the request is refused before execution. */
  invalid: boolean;
  operationName: string | undefined;
  decoy: boolean;
  selections: ResolvedSelection[];
  fragments: Map<string, { on: string; selections: ResolvedSelection[] }>;
  variableDefinitions: VariableDefinition[];
  variables: Record<string, unknown>;
  /** Reads or writes the remote's messages (the only state it has). */
  stateful: boolean;
  /** The document in the remote's own names. */
  remoteQuery: string;
}

function literal(value: unknown, type: GraphQLInputType): string {
  const ast = astFromValue(value, type);
  if (!ast) throw new Error(`cannot write ${JSON.stringify(value)} as a ${String(type)}`);
  return print(ast);
}

function resolve(operation: Operation, forcedAliases: ReadonlySet<string>): Omit<ResolvedOperation, 'remoteQuery'> {
  let aliases = 0;
  const fragmentNames = new Map<string, string>();
  const fragments = new Map<string, { on: string; selections: ResolvedSelection[] }>();
  const variableDefinitions: VariableDefinition[] = [];
  const variables: Record<string, unknown> = {};
  let stateful = operation.kind === 'mutation';
  let invalid = false;

  const value = (v: Value, type: GraphQLInputType, renamed: boolean): ResolvedValue => {
    if (v.kind === 'literal') return { kind: 'literal', text: literal(v.value, type) };
    if (v.kind === 'object') {
      const named = getNamedType(type);
      if (!isInputObjectType(named)) throw new Error(`an object value for ${String(type)}`);
      const fields = named.getFields();
      return {
        kind: 'object',
        fields: v.fields.map((f) => ({ name: f.name, value: value(f.value, fields[f.name]!.type, renamed) })),
      };
    }
    const name = `v${variableDefinitions.length}`;
    const declared = v.nonNull && !isNonNullType(type) ? new GraphQLNonNull(type) : type;
    variableDefinitions.push({
      name,
      type: declared,
      renamed,
      defaultValue: v.defaultValue === undefined ? undefined : literal(v.defaultValue, type),
    });
    if (v.value !== undefined) variables[name] = v.value;
    if (v.invalid) invalid = true;
    return { kind: 'variable', name };
  };
  const directive = (d: Directive | undefined): ResolvedDirective | undefined =>
    d && { name: d.name, value: value(d.value, new GraphQLNonNull(GraphQLBoolean), false) };

  const selections = (list: Selection[], parent: string): ResolvedSelection[] =>
    list.map((s): ResolvedSelection => {
      switch (s.kind) {
        case 'field': {
          if (s.name === 'messages') stateful = true;
          const field = fieldsOf(remoteSchema.getType(parent) as GraphQLCompositeType).find((f) => f.name === s.name)!;
          return {
            kind: 'field',
            parent,
            name: s.name,
            alias: s.alias || forcedAliases.has(s.name) ? `a${aliases++}` : undefined,
            args: s.args.map((a) => {
              const type = field.args.find((x) => x.name === a.name)!.type;
              return { name: a.name, value: value(a.value, type, true) };
            }),
            directive: directive(s.directive),
            selections: s.selections && selections(s.selections, getNamedType(field.type).name),
          };
        }
        case 'typename':
          return { kind: 'typename', alias: s.alias ? `a${aliases++}` : undefined, directive: directive(s.directive) };
        case 'inline':
          return {
            kind: 'inline',
            on: s.on,
            directive: directive(s.directive),
            selections: selections(s.selections, s.on ?? parent),
          };
        case 'spread': {
          // Equal fragments are written once and spread where each was generated.
          const key = JSON.stringify([s.on, s.selections]);
          let name = fragmentNames.get(key);
          if (name === undefined) {
            name = `F${fragmentNames.size}`;
            fragmentNames.set(key, name);
            fragments.set(name, { on: s.on, selections: selections(s.selections, s.on) });
          }
          return { kind: 'spread', fragment: name, directive: directive(s.directive) };
        }
      }
    });

  const root = operation.kind === 'query' ? 'Query' : 'Mutation';
  let resolved = selections(operation.selections, root);
  if (operation.skipRoots) {
    resolved = [{ kind: 'inline', on: undefined, directive: directive(operation.skipRoots), selections: resolved }];
  }
  return {
    kind: operation.kind,
    invalid,
    operationName: operation.named ? 'Main' : undefined,
    decoy: operation.decoy,
    selections: resolved,
    fragments,
    variableDefinitions,
    variables,
    stateful,
  };
}

/**
 * Names the aliases, variables and fragments of a generated operation. Two fields of one response
 * key that cannot be merged (other arguments, say) are given aliases until the remote's schema
 * validates the document.
 */
export function resolveOperation(operation: Operation): ResolvedOperation {
  const forced = new Set<string>();
  for (;;) {
    const resolved = resolve(operation, forced);
    const remoteQuery = documentFor(resolved, undefined);
    const errors = validate(remoteSchema, parse(remoteQuery));
    if (errors.length === 0) return { ...resolved, remoteQuery };
    const before = forced.size;
    for (const error of errors) {
      const key = /^Fields "(\w+)" conflict/.exec(error.message)?.[1];
      if (key) forced.add(key);
    }
    if (forced.size === before) {
      const messages = errors.map((e) => e.message).join('; ');
      throw new Error(`generated an operation the remote refuses: ${messages}\n${print(parse(remoteQuery))}`);
    }
  }
}

/**
 * True when a fragment among the root fields (directly inside the namespace field, for a client of
 * a namespaced remote) has `@skip` or `@include`: the compiled plan leaves such an operation to
 * delegation, where the known bugs of `differential.test.ts` live.
 */
export function hasConditionalRootFragment(op: ResolvedOperation): boolean {
  const visit = (list: ResolvedSelection[]): boolean =>
    list.some((s) => {
      if (s.kind === 'inline') return s.directive !== undefined || visit(s.selections);
      if (s.kind === 'spread') return s.directive !== undefined || visit(op.fragments.get(s.fragment)!.selections);
      return false;
    });
  return visit(op.selections);
}

/**
 * True when one response key among the root fields is selected more than once (`user(id: "1") {
 * id } user(id: "1") { name }`, `boom ... { boom }`), through fragments too.
 */
export function repeatsRootField(op: ResolvedOperation): boolean {
  const seen = new Set<string>();
  const visit = (list: ResolvedSelection[]): boolean =>
    list.some((s) => {
      if (s.kind === 'inline') return visit(s.selections);
      if (s.kind === 'spread') return visit(op.fragments.get(s.fragment)!.selections);
      if (s.kind !== 'field') return false;
      const key = s.alias ?? s.name;
      if (seen.has(key)) return true;
      seen.add(key);
      return false;
    });
  return visit(op.selections);
}

/**
 * True when a selection set selects one response key twice, the first time with `@skip` or
 * `@include` (`name @skip(if: true) name`).
 */
export function repeatsConditionalField(op: ResolvedOperation): boolean {
  const check = (list: ResolvedSelection[]): boolean => {
    const first = new Map<string, ResolvedSelection>();
    for (const s of list) {
      if (s.kind === 'inline') {
        if (check(s.selections)) return true;
        continue;
      }
      if (s.kind === 'spread') continue;
      if (s.kind === 'field' && s.selections && check(s.selections)) return true;
      const key = s.alias ?? (s.kind === 'field' ? s.name : '__typename');
      const earlier = first.get(key);
      if (earlier?.directive) return true;
      if (!earlier) first.set(key, s);
    }
    return false;
  };
  return check(op.selections) || [...op.fragments.values()].some((f) => check(f.selections));
}

/** What an operation exercises, for `DIFF_STATS`: a property that never generates a feature tests nothing of it. */
export function featuresOf(op: ResolvedOperation): string[] {
  const found = new Set<string>();
  const visit = (list: ResolvedSelection[], depth: number) => {
    for (const s of list) {
      if (s.directive) found.add('@skip/@include');
      if (s.kind === 'field') {
        if (s.alias) found.add('alias');
        if (s.args.some((a) => a.value.kind === 'object')) found.add('input object literal with variables inside');
        if (s.selections) visit(s.selections, depth + 1);
      } else if (s.kind === 'typename') {
        found.add(depth === 0 ? '__typename at the root' : '__typename');
      } else if (s.kind === 'inline') {
        found.add(`inline fragment on ${s.on ?? '(no type condition)'}`);
        visit(s.selections, depth);
      }
    }
  };
  visit(op.selections, 0);
  for (const fragment of op.fragments.values()) {
    found.add(`named fragment on ${fragment.on}`);
    visit(fragment.selections, fragment.on === 'Query' || fragment.on === 'Mutation' ? 0 : 1);
  }
  if (op.variableDefinitions.length > 0) found.add('variable');
  if (op.variableDefinitions.some((d) => d.defaultValue !== undefined)) found.add('variable with a default value');
  if (op.variableDefinitions.some((d) => !(d.name in op.variables))) found.add('variable not sent');
  if (op.decoy) found.add('second operation in the document');
  if (op.invalid) found.add('invalid variable value');
  const [first] = op.selections;
  if (op.selections.length === 1 && first?.kind === 'inline' && first.on === undefined && first.directive) found.add('every root field skipped');
  return [...found].map((f) => `feature: ${f}`);
}

// ---- Printing, in the remote's names or the client's ----

function typeText(type: GraphQLInputType, rename: (name: string) => string): string {
  if (isNonNullType(type)) return `${typeText(type.ofType, rename)}!`;
  if (isListType(type)) return `[${typeText(type.ofType, rename)}]`;
  return rename(type.name);
}

function valueText(v: ResolvedValue): string {
  if (v.kind === 'literal') return v.text;
  if (v.kind === 'variable') return `$${v.name}`;
  return `{${v.fields.map((f) => `${f.name}: ${valueText(f.value)}`).join(', ')}}`;
}

function directiveText(d: ResolvedDirective | undefined): string {
  return d ? ` @${d.name}(if: ${valueText(d.value)})` : '';
}

/** The operation as a client of `naming` writes it, or in the remote's own names (`naming` undefined). */
export function documentFor(op: Omit<ResolvedOperation, 'remoteQuery'>, naming: Naming | undefined): string {
  const typeCondition = (name: string) => {
    if (!naming) return name;
    if (name === 'Query') return naming.root('query');
    if (name === 'Mutation') return naming.root('mutation');
    return naming.type(name);
  };
  const selectionSet = (list: ResolvedSelection[]): string =>
    `{ ${list
      .map((s) => {
        switch (s.kind) {
          case 'field': {
            const name = naming ? naming.field(s.parent, s.name) : s.name;
            const args = s.args.length ? `(${s.args.map((a) => `${a.name}: ${valueText(a.value)}`).join(', ')})` : '';
            const sub = s.selections ? ` ${selectionSet(s.selections)}` : '';
            return `${s.alias ? `${s.alias}: ` : ''}${name}${args}${directiveText(s.directive)}${sub}`;
          }
          case 'typename':
            return `${s.alias ? `${s.alias}: ` : ''}__typename${directiveText(s.directive)}`;
          case 'inline':
            return `...${s.on ? ` on ${typeCondition(s.on)}` : ''}${directiveText(s.directive)} ${selectionSet(s.selections)}`;
          case 'spread':
            return `...${s.fragment}${directiveText(s.directive)}`;
        }
      })
      .join(' ')} }`;
  const variables = op.variableDefinitions.length
    ? `(${op.variableDefinitions
        .map((d) => {
          const type = typeText(d.type, naming && d.renamed ? (name) => naming.type(name) : (name) => name);
          return `$${d.name}: ${type}${d.defaultValue === undefined ? '' : ` = ${d.defaultValue}`}`;
        })
        .join(', ')})`
    : '';
  const root = naming?.namespace ? `{ ${naming.namespace} ${selectionSet(op.selections)} }` : selectionSet(op.selections);
  const head = `${op.kind}${op.operationName ? ` ${op.operationName}` : ''}${variables}`;
  const parts = [`${head} ${root}`];
  for (const [name, fragment] of op.fragments) {
    parts.push(`fragment ${name} on ${typeCondition(fragment.on)} ${selectionSet(fragment.selections)}`);
  }
  if (op.decoy) parts.push('query Other { __typename }');
  return parts.join('\n');
}

// ---- The remote's answer, renamed ----

interface Level {
  get(key: string): { clientKey: string; typename: boolean; children: Level | undefined } | undefined;
}

/**
 * The response keys of a selection set, merged over its fragments whatever their type condition:
 * the remote's key, the client's, and the level below.
 */
function levelOf(op: ResolvedOperation, selections: ResolvedSelection[], naming: Naming): Level {
  const entries = new Map<string, { clientKey: string; typename: boolean; below: ResolvedSelection[] | undefined }>();
  const visit = (list: ResolvedSelection[]) => {
    for (const s of list) {
      if (s.kind === 'inline') visit(s.selections);
      else if (s.kind === 'spread') visit(op.fragments.get(s.fragment)!.selections);
      else {
        const key = s.alias ?? (s.kind === 'field' ? s.name : '__typename');
        const clientKey = s.alias ?? (s.kind === 'field' ? naming.field(s.parent, s.name) : '__typename');
        const known = entries.get(key);
        if (known && known.clientKey !== clientKey) {
          throw new Error(`response key "${key}" means "${known.clientKey}" and "${clientKey}" to the client`);
        }
        const below = s.kind === 'field' ? s.selections : undefined;
        entries.set(key, {
          clientKey,
          typename: s.kind === 'typename',
          below: below ? [...(known?.below ?? []), ...below] : known?.below,
        });
      }
    }
  };
  visit(selections);
  const levels = new Map<string, Level | undefined>();
  return {
    get(key) {
      const entry = entries.get(key);
      if (!entry) return undefined;
      if (!levels.has(key)) levels.set(key, entry.below && levelOf(op, entry.below, naming));
      return { clientKey: entry.clientKey, typename: entry.typename, children: levels.get(key) };
    },
  };
}

function mapValue(value: unknown, level: Level | undefined, naming: Naming): unknown {
  if (value === null || level === undefined) return value;
  if (Array.isArray(value)) return value.map((item) => mapValue(item, level, naming));
  const out: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value as Record<string, unknown>)) {
    const entry = level.get(key);
    if (!entry) throw new Error(`the remote answered key "${key}", which the operation does not select`);
    out[entry.clientKey] =
      entry.typename && typeof inner === 'string' ? naming.typename(inner) : mapValue(inner, entry.children, naming);
  }
  return out;
}

function mapPath(path: ReadonlyArray<string | number>, root: Level, naming: Naming): Array<string | number> {
  const out: Array<string | number> = naming.namespace ? [naming.namespace] : [];
  let level: Level | undefined = root;
  for (const element of path) {
    if (typeof element === 'number' || level === undefined) {
      out.push(element);
      continue;
    }
    const entry: ReturnType<Level['get']> = level.get(element);
    out.push(entry?.clientKey ?? element);
    level = entry?.children;
  }
  return out;
}

export interface ComparableAnswer {
  data: unknown;
  /** Message and path only, sorted (the order of errors is not specified). */
  errors: Array<{ message: string; path: Array<string | number> | undefined }>;
}

export function comparableErrors(errors: unknown): ComparableAnswer['errors'] {
  const list = Array.isArray(errors) ? (errors as Array<{ message?: unknown; path?: unknown }>) : [];
  return list
    .map((e) => ({ message: String(e.message), path: Array.isArray(e.path) ? (e.path as Array<string | number>) : undefined }))
    .sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
}

/** What the client should be answered, given the remote's own answer to `op.remoteQuery`. */
export function expectedAnswer(op: ResolvedOperation, naming: Naming, remote: { data?: unknown; errors?: unknown }): ComparableAnswer {
  const root = levelOf(op, op.selections, naming);
  const data = remote.data === undefined ? undefined : mapValue(remote.data, root, naming);
  const errors = (Array.isArray(remote.errors) ? (remote.errors as Array<{ message?: unknown; path?: unknown }>) : []).map((e) => ({
    message: e.message,
    ...(Array.isArray(e.path) && { path: mapPath(e.path as Array<string | number>, root, naming) }),
  }));
  return {
    data: naming.namespace && data !== undefined ? { [naming.namespace]: data } : data,
    errors: comparableErrors(errors),
  };
}

// ---- Errors in full: message, path, locations, extensions, and whether `data` is there ----

export interface Location {
  line: number;
  column: number;
}

export interface FullError {
  message: string;
  path?: Array<string | number>;
  locations?: Location[];
  extensions?: Record<string, unknown>;
}

export interface FullAnswer {
  /** Whether the answer has a `data` key at all (an error before execution leaves it out). */
  hasData: boolean;
  data: unknown;
  /** Sorted (the order of errors is not specified). */
  errors: FullError[];
}

/** A response's errors with every member a client reads, in a stable order. */
export function fullErrors(errors: unknown): FullError[] {
  const list = Array.isArray(errors) ? (errors as Array<Record<string, unknown>>) : [];
  return list
    .map((e) => ({
      message: String(e['message']),
      ...(Array.isArray(e['path']) && { path: e['path'] as Array<string | number> }),
      ...(Array.isArray(e['locations']) && { locations: e['locations'] as Location[] }),
      ...(e['extensions'] !== undefined && { extensions: e['extensions'] as Record<string, unknown> }),
    }))
    .sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
}

/** An answer as the client reads it, for comparison with {@link expectedFullAnswer}. */
export function fullAnswer(body: { data?: unknown; errors?: unknown }): FullAnswer {
  return { hasData: 'data' in body, data: body.data, errors: fullErrors(body.errors) };
}

function nodesOf(text: string): { source: Source; nodes: ASTNode[] } {
  const source = new Source(text);
  const nodes: ASTNode[] = [];
  visit(parse(source), {
    enter(node) {
      nodes.push(node);
    },
  });
  return { source, nodes };
}

/**
 * Where a location in the remote's document (`documentFor(op, undefined)`) is in the client's
 * (`documentFor(op, naming)`): both are printed from one operation, so their nodes come in the same
 * order, but for the namespace field the client's document has around its root fields. A location
 * is that of the outermost node that starts there (graphql-js locates an error at a node's start).
 */
export function clientLocationOf(remoteQuery: string, clientQuery: string, namespace: string | undefined): (location: Location) => Location | undefined {
  const remote = nodesOf(remoteQuery);
  const client = nodesOf(clientQuery);
  let clientNodes = client.nodes;
  if (namespace) {
    // The namespace field, its name and its selection set, in the first operation.
    const at = clientNodes.findIndex((n) => n.kind === Kind.FIELD && n.name.value === namespace);
    clientNodes = [...clientNodes.slice(0, at), ...clientNodes.slice(at + 3)];
  }
  if (clientNodes.length !== remote.nodes.length) throw new Error('the two documents do not have the same shape');
  return ({ line, column }) => {
    const lines = remoteQuery.split('\n');
    let offset = column - 1;
    for (let i = 0; i < line - 1; i++) offset += lines[i]!.length + 1;
    const index = remote.nodes.findIndex((n) => n.loc?.start === offset);
    if (index === -1) return undefined;
    const start = clientNodes[index]!.loc!.start;
    return getLocation(client.source, start);
  };
}

/**
 * Type names in double quotes (`"Int!"`, `"[Role]"`, `"MessageInput"`), renamed as a client of
 * `naming` sees them; not in an error about a variable of `@skip` / `@include`, whose `Boolean` the
 * client writes as it is.
 */
function renameQuotedTypes(message: string, naming: Naming, op: ResolvedOperation): string {
  const variable = /^Variable "\$(\w+)"/.exec(message)?.[1];
  if (variable !== undefined && op.variableDefinitions.find((d) => d.name === variable)?.renamed === false) return message;
  const known = new Set(Object.keys(remoteSchema.getTypeMap()).filter((name) => !name.startsWith('__')));
  return message.replace(/"(\[*)([_A-Za-z][_0-9A-Za-z]*)([!\]]*)"/g, (whole, open: string, name: string, close: string) =>
    known.has(name) ? `"${open}${naming.type(name)}${close}"` : whole,
  );
}

/**
 * What the client should be answered, in full, given the remote's own answer to `op.remoteQuery`:
 * the data renamed, errors with their message (type names the gateway names itself, in its own
 * check of the variables, as the client sees them), the client's path, locations in the client's
 * document and the remote's extensions; `data` only where the remote answered some.
 */
export function expectedFullAnswer(
  op: ResolvedOperation,
  naming: Naming,
  clientQuery: string,
  remote: { data?: unknown; errors?: unknown },
): FullAnswer {
  const renamed = expectedAnswer(op, naming, remote);
  const root = levelOf(op, op.selections, naming);
  const locate = clientLocationOf(op.remoteQuery, clientQuery, naming.namespace);
  const errors = (Array.isArray(remote.errors) ? (remote.errors as Array<Record<string, unknown>>) : []).map((e) => {
    const locations = Array.isArray(e['locations']) ? (e['locations'] as Location[]).map(locate) : undefined;
    return {
      message: renameQuotedTypes(String(e['message']), naming, op),
      ...(Array.isArray(e['path']) && { path: mapPath(e['path'] as Array<string | number>, root, naming) }),
      ...(locations && { locations: locations.map((l) => l ?? { line: -1, column: -1 }) }),
      ...(e['extensions'] !== undefined && { extensions: e['extensions'] }),
    };
  });
  return { hasData: 'data' in remote, data: renamed.data, errors: fullErrors(errors) };
}
