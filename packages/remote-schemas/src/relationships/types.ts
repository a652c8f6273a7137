/**
 * Remote relationships as the metadata holds them (Hasura v2's shape): a field added to an object
 * type of one remote (the source) whose value comes from a root query field of another remote, or
 * of the same one (the target), with arguments taken from fields of the source object. Every name
 * is the remote's own name, before customization.
 */

/** One level of `remote_field`: the arguments of the field, and the next level when there is one. */
export interface RemoteFieldCall {
  /** Argument name -> value; a string `"$x"` at any depth is the value of the source's field `x`. */
  arguments: Record<string, unknown>;
  field?: RemoteFieldPath;
}

/** Exactly one key: the field's own name. */
export type RemoteFieldPath = Record<string, RemoteFieldCall>;

/**
 * Call the target field once with the list of every distinct join value of a level (the field
 * takes a list argument and answers a list), instead of once per join value.
 */
export interface RemoteRelationshipBatch {
  /** The list argument of the last `remote_field` level that receives the join values. */
  argument: string;
  /** A field of the answer's items holding the join value; absent: items answer in the order of the keys. */
  match_field?: string;
}

export interface ToRemoteSchemaRelationship {
  remote_schema: string;
  /** The source type's fields whose values the arguments use (`"$x"`). */
  lhs_fields: string[];
  remote_field: RemoteFieldPath;
  batch?: RemoteRelationshipBatch;
}

export interface RemoteRelationshipDefinition {
  to_remote_schema: ToRemoteSchemaRelationship;
}

/** One relationship of a remote: identified by its type and name (one name may be used on two types). */
export interface RemoteRelationship {
  /** The source remote's own name of the object type that gets the field. */
  type_name: string;
  name: string;
  definition: RemoteRelationshipDefinition;
}
