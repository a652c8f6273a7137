import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { buildSchema, getNamedType, isEnumType, isInputObjectType, isInterfaceType, isObjectType, isUnionType, print, type GraphQLSchema } from 'graphql';
import { describe, expect, it } from 'vitest';
// The server's own reader of permissions: the judge of what the console writes.
import type { RoleGrant, TypeGrant } from '../../remote-schemas/src/permissions/grant.js';
import { validateRoleSchema } from '../../remote-schemas/src/permissions/validate.js';
import { permissionsRemote } from '../../remote-schemas/test/fixtures/permissions-remote.js';
import { echoTypeDefs } from '../../remote-schemas/test/utils/echo-remote.js';
import { sampleTypeDefs } from '../../../examples/sample-remotes/src/sample-schema.js';
import { coverage, selectionProblems, withArgument, withEnumValue, withField, withInputField, withInterface, withPreset, withType, withUnionMember } from '../src/permissions/editing.js';
import { emptySelection, fromSdl, permissionTypes, toSdl, type RoleSelection } from '../src/permissions/model.js';
import { placeReasons, validationReasons } from '../src/permissions/messages.js';

const REMOTES: ReadonlyArray<[name: string, schema: GraphQLSchema]> = [
  ['permissions remote', permissionsRemote()],
  ['sample remote', buildSchema(sampleTypeDefs)],
  ['echo remote', buildSchema(echoTypeDefs)],
];
const [, permissions] = REMOTES[0] as [string, GraphQLSchema];
const [, sample] = REMOTES[1] as [string, GraphQLSchema];
const [, echo] = REMOTES[2] as [string, GraphQLSchema];

function judge(remote: GraphQLSchema, sdl: string) {
  return validateRoleSchema(remote, sdl, { sessionVariablePrefix: 'x-svc-' });
}

/** A grant as plain data, lists that mean sets sorted, presets printed. */
function plain(grant: RoleGrant) {
  const plainType = (type: TypeGrant) => {
    switch (type.kind) {
      case 'object':
      case 'interface':
        return {
          kind: type.kind,
          interfaces: [...type.interfaces].sort(),
          fields: Object.fromEntries(
            [...type.fields].map(([name, field]) => [
              name,
              Object.fromEntries([...field.args].map(([arg, value]) => [arg, value.preset ? [print(value.preset.value), value.preset.static] : null])),
            ]),
          ),
        };
      case 'input':
        return { kind: type.kind, fields: Object.fromEntries([...type.fields].map(([name, value]) => [name, value.preset ? [print(value.preset.value), value.preset.static] : null])) };
      case 'enum':
        return { kind: type.kind, values: [...type.values].sort() };
      case 'union':
        return { kind: type.kind, members: [...type.members].sort() };
      case 'scalar':
        return { kind: type.kind };
    }
  };
  return { roots: grant.roots, hasPresets: grant.hasPresets, types: Object.fromEntries([...grant.types].map(([name, type]) => [name, plainType(type)])) };
}

function grantOf(remote: GraphQLSchema, sdl: string): RoleGrant {
  const result = judge(remote, sdl);
  if (!result.ok) throw new Error(`the server refuses:\n${sdl}\n${result.message}`);
  return result.grant;
}

/** Reads `sdl` into the tree, prints it again, and holds both the printed SDL and the tree to the original. */
function expectRoundTrip(remote: GraphQLSchema, sdl: string): string {
  const read = fromSdl(sdl, remote);
  expect(read.problems).toEqual([]);
  const printed = toSdl(read.selection, remote);
  expect(plain(grantOf(remote, printed))).toEqual(plain(grantOf(remote, sdl)));
  expect(fromSdl(printed, remote)).toEqual({ selection: read.selection, problems: [] });
  return printed;
}

describe('the tree of a permission and its SDL', () => {
  it('prints the fields and arguments ticked, with the remote types, and a session preset', () => {
    let selection = emptySelection();
    selection = withField(selection, sample, 'Query', 'hello', true);
    selection = withField(selection, sample, 'Query', 'user', true);
    selection = withField(selection, sample, 'User', 'id', true);
    selection = withField(selection, sample, 'User', 'name', true);
    selection = withPreset(selection, sample, { type: 'Query', field: 'user', arg: 'id' }, { kind: 'session', variable: 'x-svc-user-id' });
    expect(selectionProblems(selection, sample)).toEqual(new Map());
    expect(toSdl(selection, sample)).toBe(
      'type Query {\n  hello(name: String): String!\n  user(id: ID! @preset(value: "x-svc-user-id")): User\n}\n\ntype User {\n  id: ID!\n  name: String!\n}\n',
    );
    expect(judge(sample, toSdl(selection, sample)).ok).toBe(true);
  });

  it('writes a schema block for roots with other names, and literal presets of enums, lists and input objects', () => {
    let selection = emptySelection();
    selection = withField(selection, permissions, 'query_root', 'search', true);
    selection = withField(selection, permissions, 'User', 'id', true);
    selection = withField(selection, permissions, 'Post', 'id', true);
    selection = withPreset(selection, permissions, { type: 'query_root', field: 'search', arg: 'roles' }, { kind: 'literal', value: '[VIEWER, EDITOR]' });
    selection = withField(selection, permissions, 'query_root', 'users', true);
    selection = withPreset(selection, permissions, { type: 'query_root', field: 'users', arg: 'paging' }, { kind: 'literal', value: '{limit: 5}' });
    selection = withPreset(selection, permissions, { type: 'query_root', field: 'users', arg: 'order' }, { kind: 'literal', value: 'desc' });
    const sdl = toSdl(selection, permissions);
    expect(sdl.startsWith('schema {\n  query: query_root\n}\n\ntype query_root {\n')).toBe(true);
    expect(sdl).toContain('search(term: String!, limit: Int, roles: [Role!] @preset(value: [VIEWER, EDITOR])): [SearchResult!]!');
    expect(sdl).toContain('paging: Paging @preset(value: {limit: 5})');
    expect(sdl).toContain('union SearchResult = User | Post');
    expect(selectionProblems(selection, permissions)).toEqual(new Map());
    expectRoundTrip(permissions, sdl);
  });

  it('keeps nested input presets three levels deep, and a literal string that looks like a session variable static', () => {
    let selection = emptySelection();
    selection = withField(selection, permissions, 'query_root', 'users', true);
    selection = withField(selection, permissions, 'User', 'name', true);
    // users(where: UserWhere) → UserWhere.posts: PostWhere → PostWhere.author: UserWhere → … name: StringComparison._eq
    selection = withPreset(selection, permissions, { type: 'StringComparison', field: '_eq' }, { kind: 'session', variable: 'x-svc-tenant' });
    selection = withPreset(selection, permissions, { type: 'PostWhere', field: 'visibility' }, { kind: 'literal', value: '[PUBLIC]' });
    selection = withPreset(selection, permissions, { type: 'IntComparison', field: '_in' }, { kind: 'literal', value: '"x-svc-not-a-variable"' });
    selection = withEnumValue(selection, permissions, 'Visibility', 'PRIVATE', false);
    const sdl = toSdl(selection, permissions);
    expect(sdl).toContain('input StringComparison {\n  _eq: String @preset(value: "x-svc-tenant")\n  _ilike: String\n}');
    expect(sdl).toContain('visibility: [Visibility!] @preset(value: [PUBLIC])');
    expect(sdl).toContain('_in: [Int!] @preset(value: "x-svc-not-a-variable", static: true)');
    expect(sdl).toContain('enum Visibility {\n  PUBLIC\n  INTERNAL\n}');
    // The literal string preset is not a list of Int: the console says so before the server does.
    expect(selectionProblems(selection, permissions).get('IntComparison._in')).toEqual(['the preset is not a value of [Int!]']);
    selection = withPreset(selection, permissions, { type: 'IntComparison', field: '_in' }, { kind: 'literal', value: '[1, 2]' });
    expect(selectionProblems(selection, permissions)).toEqual(new Map());
    const grant = grantOf(permissions, toSdl(selection, permissions));
    const where = grant.types.get('StringComparison');
    expect(where?.kind === 'input' && print(where.fields.get('_eq')?.preset?.value ?? { kind: 'NullValue' } as never)).toBe('"x-svc-tenant"');
    expectRoundTrip(permissions, toSdl(selection, permissions));
  });

  it('reads presets back: session, literal, static, and static where it was not needed', () => {
    const { selection, problems } = fromSdl(
      `type Query {
        echo(userId: Int @preset(value: "X-Svc-User-Id"), note: String @preset(value: "x-svc-note", static: true)): String!
        colors(color: Color! @preset(value: GREEN, static: true)): String!
      }
      enum Color { GREEN }`,
      echo,
    );
    expect(problems).toEqual([]);
    const query = selection.types.get('Query');
    expect(query?.kind === 'object' && [...(query.fields.get('echo')?.args ?? [])]).toEqual([
      ['userId', { preset: { kind: 'session', variable: 'X-Svc-User-Id' } }],
      ['note', { preset: { kind: 'literal', value: '"x-svc-note"' } }],
    ]);
    expect(query?.kind === 'object' && query.fields.get('colors')?.args.get('color')).toEqual({ preset: { kind: 'literal', value: 'GREEN', static: true } });
    expect(toSdl(selection, echo)).toContain('colors(color: Color! @preset(value: GREEN, static: true)): String!');
  });

  it('names what the remote does not have instead of dropping it silently', () => {
    const { selection, problems } = fromSdl('type Query { hello: String! nope: Int }\ntype Ghost { id: ID }\ninput MessageInput { text: String! sender: String }', sample);
    expect(problems).toEqual([
      'field "nope" does not exist in the type "Query"',
      'type "Ghost" does not exist in the remote',
      '"sender" does not exist in the input type "MessageInput"',
    ]);
    expect([...selection.types.keys()]).toEqual(['Query', 'MessageInput']);
    expect(fromSdl('type Query {', sample).problems[0]).toMatch(/^the SDL cannot be parsed: Syntax Error/);
  });

  it('selects what a field needs with it, and an interface\'s fields in the types that implement it', () => {
    let selection = withField(emptySelection(), permissions, 'query_root', 'node', true);
    expect([...selection.types.keys()]).toEqual(['query_root', 'Node']);
    selection = withType(selection, permissions, 'Comment', true);
    const comment = selection.types.get('Comment');
    expect(comment?.kind === 'object' && [...comment.interfaces]).toEqual(['Node']);
    // Comment.author: User, which implements Node too; neither has a field yet.
    expect(selectionProblems(selection, permissions)).toEqual(
      new Map([
        ['Node', ['select at least one field']],
        ['User', ['select at least one field']],
      ]),
    );
    // Node's id goes to every type that implements it.
    selection = withField(selection, permissions, 'Node', 'id', true);
    const user = selection.types.get('User');
    expect(user?.kind === 'object' && [...user.fields.keys()]).toEqual(['id']);
    expect(selectionProblems(selection, permissions)).toEqual(new Map());
    expect(judge(permissions, toSdl(selection, permissions))).toMatchObject({ ok: true });
    // A required argument cannot be unticked; an optional one can.
    const withoutId = withArgument(selection, permissions, 'query_root', 'node', 'id', false);
    expect(withoutId).toBe(selection);
  });

  it('tells how much of each type a role has', () => {
    let selection = withType(emptySelection(), sample, 'User', true);
    const user = sample.getType('User');
    const post = sample.getType('Post');
    if (!user || !post) throw new Error('sample remote types');
    expect(coverage(selection, user)).toBe('full');
    selection = withField(selection, sample, 'User', 'posts', false);
    expect(coverage(selection, user)).toBe('partial');
    expect(coverage(emptySelection(), post)).toBe('none');
  });
});

describe('the server\'s validation message placed in the tree', () => {
  it('splits the reasons and puts each at the argument, field or type it names', () => {
    const result = judge(permissions, 'type query_root { users(where: UserWhere, nope: Int): [User!]! ghost: Int }\ntype User { id: ID! name: Int }\ninput UserWhere { name: StringComparison @preset(value: 1) }\ninput StringComparison { _eq: String }');
    if (result.ok) throw new Error('expected a refusal');
    const reasons = validationReasons(result.message);
    expect(reasons.length).toBeGreaterThan(2);
    const placed = placeReasons(result.message);
    expect([...placed.keys()].sort()).toEqual(expect.arrayContaining(['query_root.ghost', 'query_root.users(nope)']));
    expect(placed.get('query_root.users(nope)')?.[0]).toContain('argument "nope" does not exist');
    expect([...placed.values()].flat().sort()).toEqual([...reasons].sort());
    expect(placeReasons('validation for the given role-based schema failed because field "x" does not exist in the "Object": "User"')).toEqual(
      new Map([['User.x', ['field "x" does not exist in the "Object": "User"']]]),
    );
    expect(placeReasons('remote schema permissions can only be added when remote schema permissions are enabled')).toEqual(
      new Map([['', ['remote schema permissions can only be added when remote schema permissions are enabled']]]),
    );
  });
});

// Every permission SDL in the repository's tests and fixtures that the server accepts on one of the
// test remotes: read into the tree and printed again, it grants exactly the same.
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

function repositoryTestFiles(): string[] {
  const files: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      if (name === 'node_modules' || name === 'dist') continue;
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (/\.(ts|json|ya?ml)$/.test(name) && /(^|\/)test\//.test(relative(ROOT, path))) files.push(path);
    }
  };
  for (const top of ['packages', 'examples']) walk(join(ROOT, top));
  return files.filter((file) => !file.includes('/console/'));
}

function unescape(text: string): string {
  return text.replace(/\\(n|"|'|\\|`)/g, (_, c: string) => (c === 'n' ? '\n' : c));
}

/** String literals (and JSON/YAML values) that look like a permission's SDL. */
function permissionCandidates(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const found = new Set<string>();
  for (const match of text.matchAll(/`([^`]*)`|'((?:[^'\\\n]|\\.)*)'|"((?:[^"\\\n]|\\.)*)"/g)) {
    const body = match[1] ?? match[2] ?? match[3] ?? '';
    if (body.includes('${') || !/\b(type|input|enum|union|interface)\s+\w+/.test(body)) continue;
    found.add(unescape(body));
  }
  return [...found];
}

describe('every permission of the repository\'s tests and fixtures', () => {
  it('reads into the tree and prints back to a permission the server grants the same', () => {
    const seen: string[] = [];
    for (const file of repositoryTestFiles()) {
      for (const sdl of permissionCandidates(file)) {
        const remote = REMOTES.find(([, schema]) => judge(schema, sdl).ok);
        if (!remote) continue;
        seen.push(`${relative(ROOT, file)} (${remote[0]})`);
        expectRoundTrip(remote[1], sdl);
      }
    }
    // The files named in this test: the hasura fixtures, the permission tests of the remote
    // schemas, the metadata API and the server.
    expect(seen.length).toBeGreaterThan(30);
    for (const file of ['server/test/fixtures/hasura/export_metadata.json', 'remote-schemas/test/permissions-validate.test.ts', 'remote-schemas/test/permissions.test.ts', 'server/test/permissions.test.ts']) {
      expect(seen.some((entry) => entry.includes(file))).toBe(true);
    }
  });
});

describe('any selection made in the tree', () => {
  type Step =
    | { op: 'type' | 'field' | 'arg' | 'input' | 'enum' | 'member' | 'interface' | 'preset'; pick: number; on: boolean; value: number };
  const step = fc.record({
    op: fc.constantFrom('type', 'field', 'field', 'field', 'arg', 'input', 'enum', 'member', 'interface', 'preset'),
    pick: fc.nat(),
    on: fc.boolean(),
    value: fc.nat(),
  }) as fc.Arbitrary<Step>;

  function apply(selection: RoleSelection, remote: GraphQLSchema, { op, pick, on, value }: Step): RoleSelection {
    const types = permissionTypes(remote);
    const type = types[pick % types.length];
    if (!type) return selection;
    const at = <T,>(list: readonly T[]): T | undefined => list[value % Math.max(list.length, 1)];
    if (op === 'type') return withType(selection, remote, type.name, on);
    if ((op === 'field' || op === 'arg' || op === 'preset') && (isObjectType(type) || isInterfaceType(type))) {
      const field = at(Object.values(type.getFields()));
      if (!field) return selection;
      if (op === 'field') return withField(selection, remote, type.name, field.name, on);
      const arg = field.args[pick % Math.max(field.args.length, 1)];
      if (!arg) return selection;
      if (op === 'arg') return withArgument(selection, remote, type.name, field.name, arg.name, on);
      const named = getNamedType(arg.type);
      const preset = on || !(isEnumType(named) || isInputObjectType(named)) ? { kind: 'session' as const, variable: 'x-svc-user-id' } : undefined;
      return withPreset(selection, remote, { type: type.name, field: field.name, arg: arg.name }, preset);
    }
    if (op === 'input' && isInputObjectType(type)) {
      const field = at(Object.values(type.getFields()));
      return field ? withInputField(selection, remote, type.name, field.name, on) : selection;
    }
    if (op === 'enum' && isEnumType(type)) {
      const enumValue = at(type.getValues());
      return enumValue ? withEnumValue(selection, remote, type.name, enumValue.name, on) : selection;
    }
    if (op === 'member' && isUnionType(type)) {
      const member = at(type.getTypes());
      return member ? withUnionMember(selection, remote, type.name, member.name, on) : selection;
    }
    if (op === 'interface' && (isObjectType(type) || isInterfaceType(type))) {
      const iface = at(type.getInterfaces());
      return iface ? withInterface(selection, remote, type.name, iface.name, on) : selection;
    }
    return selection;
  }

  /** Gives every type left empty one field (of a scalar or enum type), value or member, as a user would. */
  function settle(selection: RoleSelection, remote: GraphQLSchema): RoleSelection {
    let current = selection;
    for (let round = 0; round < 20; round++) {
      const before = current;
      for (const [key, messages] of selectionProblems(current, remote)) {
        const type = remote.getType(key);
        if (!type || !messages.some((message) => message.startsWith('select at least one'))) continue;
        if (isObjectType(type) || isInterfaceType(type)) {
          const leaf = Object.values(type.getFields()).find((field) => !isObjectType(getNamedType(field.type)) && field.args.length === 0);
          if (leaf) current = withField(current, remote, key, leaf.name, true);
        } else if (isEnumType(type) || isInputObjectType(type)) {
          current = withType(withType(current, remote, key, false), remote, key, true);
        } else if (isUnionType(type) && type.getTypes()[0]) {
          current = withUnionMember(current, remote, key, type.getTypes()[0]?.name ?? '', true);
        }
      }
      if (current === before) break;
    }
    return current;
  }

  it.each(REMOTES)('on the %s: prints SDL that reads back as printed, and the server accepts it whenever the console shows no problem', (_, remote) => {
    let accepted = 0;
    fc.assert(
      fc.property(fc.array(step, { minLength: 1, maxLength: 25 }), (steps) => {
        const built = steps.reduce((current, next) => apply(current, remote, next), emptySelection());
        const selection = steps.length % 2 === 0 ? settle(built, remote) : built;
        const sdl = toSdl(selection, remote);
        const reread = fromSdl(sdl, remote);
        expect(reread.problems).toEqual([]);
        expect(toSdl(reread.selection, remote)).toBe(sdl);
        const verdict = judge(remote, sdl);
        const shown = selectionProblems(selection, remote);
        if (shown.size > 0 || selection.types.size === 0) return;
        if (!verdict.ok) throw new Error(`refused with no problem shown:\n${sdl}\n${verdict.message}`);
        accepted++;
        expectRoundTrip(remote, sdl);
      }),
      { numRuns: 400 },
    );
    expect(accepted).toBeGreaterThan(5);
  });
});
