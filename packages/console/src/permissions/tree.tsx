import { memo, useEffect, useId, useMemo, useState } from 'react';
import {
  getNamedType,
  isEnumType,
  isInputObjectType,
  isInterfaceType,
  isObjectType,
  isUnionType,
  type GraphQLArgument,
  type GraphQLInputField,
  type GraphQLNamedType,
  type GraphQLSchema,
} from 'graphql';
import { coverage, inputValueOf, isRequiredInputValue, nodeKey, withArgument, withEnumValue, withField, withInputField, withInterface, withPreset, withType, withUnionMember, withWholeType, type InputValuePath } from './editing.js';
import { permissionTypes, type Preset, type RoleSelection } from './model.js';

export type Problems = ReadonlyMap<string, readonly string[]>;

interface TreeProps {
  remote: GraphQLSchema;
  selection: RoleSelection;
  onChange: (selection: RoleSelection) => void;
  /** What the console sees wrong, by node (`Type`, `Type.field`, `Type.field(arg)`). */
  problems: Problems;
  /** What the server said, by node. */
  serverProblems: Problems;
}

const COVERAGE_TEXT = { full: 'all', partial: 'part', none: 'none' } as const;

function ProblemList({ id, problems, server }: { id: string; problems: readonly string[] | undefined; server: readonly string[] | undefined }) {
  if (!problems?.length && !server?.length) return null;
  return (
    <ul className="node-problems" id={id}>
      {(server ?? []).map((message) => (
        <li key={`s-${message}`} className="server-problem" data-testid="server-problem">
          Server: {message}
        </li>
      ))}
      {(problems ?? []).map((message) => (
        <li key={`c-${message}`} className="client-problem">
          {message}
        </li>
      ))}
    </ul>
  );
}

type PresetKind = 'none' | Preset['kind'];

/** The preset of an argument or input field: none, a session variable, or a literal of its type. */
/** `describedBy`: the id of the problems of its argument or input field, when it has some. */
function PresetEditor({
  label,
  preset,
  enumValues,
  onChange,
  describedBy,
}: {
  label: string;
  preset: Preset | undefined;
  enumValues: readonly string[];
  onChange: (preset: Preset | undefined) => void;
  describedBy: string | undefined;
}) {
  const id = useId();
  const kind: PresetKind = preset?.kind ?? 'none';
  const [draft, setDraft] = useState(() => (preset?.kind === 'session' ? preset.variable : preset?.kind === 'literal' ? preset.value : ''));
  const choose = (next: PresetKind) => {
    if (next === 'none') onChange(undefined);
    else if (next === 'session') onChange({ kind: 'session', variable: draft.toLowerCase().startsWith('x-svc-') ? draft : 'x-svc-' });
    else onChange({ kind: 'literal', value: draft === '' || draft.toLowerCase().startsWith('x-svc-') ? (enumValues[0] ?? '""') : draft });
  };
  const current = preset?.kind === 'session' ? preset.variable : preset?.kind === 'literal' ? preset.value : '';
  return (
    <span className="preset">
      <select aria-label={`Preset of ${label}`} value={kind} onChange={(event) => choose(event.target.value as PresetKind)}>
        <option value="none">no preset</option>
        <option value="session">preset: session variable</option>
        <option value="literal">preset: value</option>
      </select>
      {kind !== 'none' ? (
        <>
          <input
            aria-label={kind === 'session' ? `Session variable of ${label}` : `Preset value of ${label}`}
            aria-describedby={describedBy}
            aria-invalid={describedBy !== undefined ? true : undefined}
            list={enumValues.length > 0 && kind === 'literal' ? id : undefined}
            value={current}
            placeholder={kind === 'session' ? 'x-svc-user-id' : 'a GraphQL value'}
            onChange={(event) => {
              setDraft(event.target.value);
              onChange(kind === 'session' ? { kind: 'session', variable: event.target.value } : { kind: 'literal', value: event.target.value });
            }}
          />
          {enumValues.length > 0 ? (
            <datalist id={id}>
              {enumValues.map((value) => (
                <option key={value} value={value} />
              ))}
            </datalist>
          ) : null}
        </>
      ) : null}
    </span>
  );
}

interface InputValueRowProps {
  remote: GraphQLSchema;
  selection: RoleSelection;
  onChange: (selection: RoleSelection) => void;
  value: GraphQLArgument | GraphQLInputField;
  path: InputValuePath;
  /** The accessible name's prefix: `Query.user argument` or `Filter.`. */
  namePrefix: string;
  problems: Problems;
  serverProblems: Problems;
  disabled: boolean;
}

function InputValueRow({ remote, selection, onChange, value, path, namePrefix, problems, serverProblems, disabled }: InputValueRowProps) {
  const id = useId();
  const key = nodeKey(path.type, path.field, path.arg);
  const chosen = inputValueOf(selection, path);
  const required = isRequiredInputValue(value);
  const named = getNamedType(value.type);
  const enumValues = isEnumType(named) ? named.getValues().map((v) => v.name) : [];
  const label = path.arg === undefined ? `${path.type}.${path.field}` : `${path.type}.${path.field}(${path.arg})`;
  const hasProblems = (problems.get(key)?.length ?? 0) + (serverProblems.get(key)?.length ?? 0) > 0;
  const toggle = (on: boolean) =>
    onChange(path.arg === undefined ? withInputField(selection, remote, path.type, path.field, on) : withArgument(selection, remote, path.type, path.field, path.arg, on));
  return (
    <li className={`node input-value${hasProblems ? ' has-problems' : ''}`} data-node={key}>
      <label className="node-label">
        <input
          type="checkbox"
          checked={chosen !== undefined}
          disabled={disabled || (required && chosen !== undefined)}
          onChange={(event) => toggle(event.target.checked)}
          aria-describedby={hasProblems ? id : undefined}
          aria-invalid={hasProblems ? true : undefined}
          aria-label={`${namePrefix}${value.name}: ${String(value.type)}${required ? ' (required)' : ''}`}
        />{' '}
        <span className="name">{value.name}</span>
        <span className="type">: {String(value.type)}</span>
        {required ? <span className="badge">required</span> : null}
      </label>
      {chosen !== undefined ? (
        <PresetEditor
          label={label}
          preset={chosen.preset}
          enumValues={enumValues}
          onChange={(preset) => onChange(withPreset(selection, remote, path, preset))}
          describedBy={hasProblems ? id : undefined}
        />
      ) : null}
      <ProblemList id={id} problems={problems.get(key)} server={serverProblems.get(key)} />
    </li>
  );
}

interface TypeNodeProps extends TreeProps {
  type: GraphQLNamedType;
  open: boolean;
  onToggleOpen: (name: string) => void;
}

const TypeNode = memo(function TypeNode({ remote, selection, onChange, problems, serverProblems, type, open, onToggleOpen }: TypeNodeProps) {
  const id = useId();
  const selected = selection.types.get(type.name);
  const level = coverage(selection, type);
  const kind = isObjectType(type) ? 'type' : isInterfaceType(type) ? 'interface' : isInputObjectType(type) ? 'input' : isEnumType(type) ? 'enum' : isUnionType(type) ? 'union' : 'scalar';
  const typeProblems = [...(problems.get(type.name) ?? [])];
  // Problems of nodes inside a closed type are counted on it.
  const inside = [...problems.keys(), ...serverProblems.keys()].filter((key) => key.startsWith(`${type.name}.`)).length;
  const hasProblems = typeProblems.length > 0 || (serverProblems.get(type.name)?.length ?? 0) > 0 || inside > 0;
  const hasChildren = kind !== 'scalar';
  return (
    <li className={`type-node${hasProblems ? ' has-problems' : ''}`} id={`type-${type.name}`} data-node={type.name}>
      <div className="type-head">
        {hasChildren ? (
          <button type="button" className="disclosure" aria-expanded={open} aria-controls={`${id}-children`} onClick={() => onToggleOpen(type.name)}>
            <span aria-hidden="true">{open ? '▾' : '▸'}</span>
            <span className="visually-hidden">{open ? 'Collapse' : 'Expand'} </span>
            {type.name}
          </button>
        ) : (
          <span className="disclosure-placeholder">{type.name}</span>
        )}
        <label className="type-check">
          <input
            type="checkbox"
            checked={selected !== undefined}
            onChange={(event) => onChange(withType(selection, remote, type.name, event.target.checked))}
            aria-describedby={hasProblems ? `${id}-problems` : undefined}
            aria-label={`${type.name}: the whole ${kind}`}
          />{' '}
          {kind}
        </label>
        <span className={`coverage coverage-${level}`}>{selected ? COVERAGE_TEXT[level] : 'none'}</span>
        {selected && level === 'partial' ? (
          <button type="button" className="link-button" onClick={() => onChange(withWholeType(selection, remote, type.name))}>
            <span className="visually-hidden">{type.name}: </span>select all
          </button>
        ) : null}
        {inside > 0 && !open ? <span className="badge badge-problem">{inside} to fix inside</span> : null}
      </div>
      <ProblemList id={`${id}-problems`} problems={typeProblems} server={serverProblems.get(type.name)} />
      {open && hasChildren ? (
        <ul className="children" id={`${id}-children`}>
          {isObjectType(type) || isInterfaceType(type) ? (
            <>
              {type.getInterfaces().map((iface) => {
                const declared = selected?.kind === 'object' || selected?.kind === 'interface' ? selected.interfaces.has(iface.name) : false;
                return (
                  <li key={`implements-${iface.name}`} className="node">
                    <label className="node-label">
                      <input
                        type="checkbox"
                        checked={declared}
                        disabled={!selected}
                        onChange={(event) => onChange(withInterface(selection, remote, type.name, iface.name, event.target.checked))}
                        aria-label={`${type.name} implements ${iface.name}`}
                      />{' '}
                      implements <span className="name">{iface.name}</span>
                    </label>
                  </li>
                );
              })}
              {Object.values(type.getFields()).map((field) => {
                const chosen = selected?.kind === 'object' || selected?.kind === 'interface' ? selected.fields.get(field.name) : undefined;
                const key = nodeKey(type.name, field.name);
                const fieldProblems = (problems.get(key)?.length ?? 0) + (serverProblems.get(key)?.length ?? 0) > 0;
                return (
                  <li key={field.name} className={`node field${fieldProblems ? ' has-problems' : ''}`} data-node={key}>
                    <label className="node-label">
                      <input
                        type="checkbox"
                        checked={chosen !== undefined}
                        onChange={(event) => onChange(withField(selection, remote, type.name, field.name, event.target.checked))}
                        aria-describedby={fieldProblems ? `${id}-${field.name}` : undefined}
                        aria-label={`${type.name}.${field.name}: ${String(field.type)}`}
                      />{' '}
                      <span className="name">{field.name}</span>
                      <span className="type">: {String(field.type)}</span>
                    </label>
                    {field.description ? <span className="description">{field.description}</span> : null}
                    <ProblemList id={`${id}-${field.name}`} problems={problems.get(key)} server={serverProblems.get(key)} />
                    {field.args.length > 0 ? (
                      <ul className="arguments" aria-label={`Arguments of ${type.name}.${field.name}`}>
                        {field.args.map((arg) => (
                          <InputValueRow
                            key={arg.name}
                            remote={remote}
                            selection={selection}
                            onChange={onChange}
                            value={arg}
                            path={{ type: type.name, field: field.name, arg: arg.name }}
                            namePrefix={`${type.name}.${field.name} argument `}
                            problems={problems}
                            serverProblems={serverProblems}
                            disabled={false}
                          />
                        ))}
                      </ul>
                    ) : null}
                  </li>
                );
              })}
            </>
          ) : null}
          {isInputObjectType(type)
            ? Object.values(type.getFields()).map((field) => (
                <InputValueRow
                  key={field.name}
                  remote={remote}
                  selection={selection}
                  onChange={onChange}
                  value={field}
                  path={{ type: type.name, field: field.name }}
                  namePrefix={`${type.name}.`}
                  problems={problems}
                  serverProblems={serverProblems}
                  disabled={false}
                />
              ))
            : null}
          {isEnumType(type)
            ? type.getValues().map((value) => (
                <li key={value.name} className="node">
                  <label className="node-label">
                    <input
                      type="checkbox"
                      checked={selected?.kind === 'enum' && selected.values.has(value.name)}
                      onChange={(event) => onChange(withEnumValue(selection, remote, type.name, value.name, event.target.checked))}
                      aria-label={`${type.name}.${value.name}`}
                    />{' '}
                    <span className="name">{value.name}</span>
                  </label>
                </li>
              ))
            : null}
          {isUnionType(type)
            ? type.getTypes().map((member) => (
                <li key={member.name} className="node">
                  <label className="node-label">
                    <input
                      type="checkbox"
                      checked={selected?.kind === 'union' && selected.members.has(member.name)}
                      onChange={(event) => onChange(withUnionMember(selection, remote, type.name, member.name, event.target.checked))}
                      aria-label={`${type.name} member ${member.name}`}
                    />{' '}
                    <span className="name">{member.name}</span>
                  </label>
                </li>
              ))
            : null}
        </ul>
      ) : null}
    </li>
  );
});

/** Types shown at once; a filter finds the others in remotes with thousands of types. */
const SHOWN = 200;

/**
 * The remote's types, roots first, each with a check box for the type and, opened, one for each
 * field, argument, input field, enum value, union member and implemented interface, and a preset
 * editor on each argument and input field.
 */
export function PermissionTree({ remote, selection, onChange, problems, serverProblems, focusType }: TreeProps & { focusType?: string | undefined }) {
  const types = useMemo(() => permissionTypes(remote), [remote]);
  const [filter, setFilter] = useState('');
  // The first type open, and the one the page was opened for (a cell of the grid).
  const [opened, setOpened] = useState<ReadonlySet<string>>(() => new Set([...types.slice(0, 1).map((type) => type.name), ...(focusType ? [focusType] : [])]));
  useEffect(() => {
    if (focusType) document.getElementById(`type-${focusType}`)?.scrollIntoView({ block: 'start' });
  }, [focusType]);
  const filterId = useId();
  const needle = filter.trim().toLowerCase();
  const matching = needle === '' ? types : types.filter((type) => type.name.toLowerCase().includes(needle) || ((isObjectType(type) || isInterfaceType(type) || isInputObjectType(type)) && Object.keys(type.getFields()).some((field) => field.toLowerCase().includes(needle))));
  const shown = matching.slice(0, SHOWN);
  const toggleOpen = (name: string) =>
    setOpened((current) => {
      const next = new Set(current);
      if (next.has(name)) next.delete(name);
      else next.add(name);
      return next;
    });
  const withProblems = types.filter((type) => [...problems.keys(), ...serverProblems.keys()].some((key) => key === type.name || key.startsWith(`${type.name}.`)));
  return (
    <div className="tree">
      <div className="tree-tools">
        <label htmlFor={filterId}>Find a type or field</label>
        <input id={filterId} type="search" value={filter} onChange={(event) => setFilter(event.target.value)} />
        <button type="button" onClick={() => setOpened(new Set(types.filter((type) => selection.types.has(type.name)).map((type) => type.name)))}>
          Open the selected types
        </button>
        {withProblems.length > 0 ? (
          <button type="button" onClick={() => setOpened(new Set([...opened, ...withProblems.map((type) => type.name)]))}>
            Open the types to fix ({withProblems.length})
          </button>
        ) : null}
        <button type="button" onClick={() => setOpened(new Set())}>
          Close all
        </button>
      </div>
      {matching.length > SHOWN ? (
        <p className="muted">
          Showing {SHOWN} of {matching.length} types: type in the filter to find others.
        </p>
      ) : null}
      <ul className="types" aria-label="Types of the remote schema">
        {shown.map((type) => (
          <TypeNode
            key={type.name}
            type={type}
            remote={remote}
            selection={selection}
            onChange={onChange}
            problems={problems}
            serverProblems={serverProblems}
            open={opened.has(type.name)}
            onToggleOpen={toggleOpen}
          />
        ))}
      </ul>
    </div>
  );
}
