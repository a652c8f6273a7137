/** The types of `@svc-graphql/remote-schemas` this package drives, in one place. */
export type {
  FieldNamesCustomization,
  PlanOptions,
  RegistryPlan,
  RemoteSchemaCustomization,
  RemoteSchemaDefinition,
  RemoteSchemaEntry,
  RemoteSchemaErrorCode,
  RemoteSchemaHeader,
  RemoteSchemaProblem,
  RemoteSchemaRegistry,
  RemoteRelationship,
  RemoteRelationshipDefinition,
  RemoteFieldPath,
  TypeNamesCustomization,
} from '@svc-graphql/remote-schemas';
