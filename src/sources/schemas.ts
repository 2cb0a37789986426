/**
 * The API shapes of data sources and their graphs, and their limits: one declaration each, types derived with
 * Static. No Node import here (the console reads these types).
 */
import { Type, type Static } from 'typebox';
import { GRAPH_VENDORS, GraphEdgeSchema, GraphNodeSchema } from '../graph/graph-schemas.js';

export const MAX_SOURCE_KEY_LENGTH = 64;
export const MAX_SOURCE_NAME_LENGTH = 200;
// The contract's rule for data source keys; it also keeps U+0000 and the like away from the database, and makes a
// key safe as the name of the embedded graph's folder.
export const SOURCE_KEY_PATTERN = new RegExp(`^[A-Za-z0-9_-]{1,${MAX_SOURCE_KEY_LENGTH}}$`);

export const MAX_GRAPH_URL = 2048;
export const MAX_GRAPH_USER = 256;
export const MAX_GRAPH_PASSWORD = 1024;

export const SourceKey = Type.String({ pattern: SOURCE_KEY_PATTERN.source, description: 'a data source key' });

export const GraphInputSchema = Type.Object(
  {
    vendor: Type.Enum([...GRAPH_VENDORS], { description: '"embedded": Kùzu under DATA_DIR, nothing to install; "neo4j": Neo4j or Memgraph over Bolt' }),
    url: Type.Optional(Type.String({ maxLength: MAX_GRAPH_URL, description: 'neo4j: bolt://, bolt+s://, neo4j://, neo4j+s:// …' })),
    user: Type.Optional(Type.String({ maxLength: MAX_GRAPH_USER })),
    password: Type.Optional(Type.String({ maxLength: MAX_GRAPH_PASSWORD, description: 'neo4j: sealed at rest, never answered' })),
    database: Type.Optional(Type.String({ maxLength: 63 })),
    allowWrites: Type.Optional(Type.Boolean({ description: 'whether Admins may run write queries (default: true embedded, false neo4j)' })),
  },
  { additionalProperties: false },
);

export const GraphAnswerSchema = Type.Object({
  vendor: Type.Enum([...GRAPH_VENDORS]),
  url: Type.Optional(Type.String()),
  user: Type.Optional(Type.String()),
  database: Type.Optional(Type.String()),
  allowWrites: Type.Boolean(),
  passwordSet: Type.Optional(Type.Boolean()),
});

export const DataSourceSchema = Type.Object(
  {
    key: Type.String(),
    name: Type.String(),
    propertyKeyAccessRights: Type.Boolean({ description: "whether its custom groups' property-key access rights apply" }),
    graph: Type.Optional(GraphAnswerSchema),
  },
  { $id: 'DataSource', description: 'A data source; `graph` absent: its alerts take matches reported through the API' },
);

/** A data source as any signed-in user lists it (LKE's `/api/dataSources`). */
export const DataSourceSummarySchema = Type.Object({
  key: Type.String(),
  name: Type.String(),
  connected: Type.Boolean({ description: 'whether its graph answers, as far as this process knows; true without a graph' }),
});

export const CreateDataSourceBody = Type.Object({
  key: Type.String(),
  name: Type.String({ minLength: 1, maxLength: MAX_SOURCE_NAME_LENGTH }),
  graph: Type.Optional(GraphInputSchema),
});

export const UpdateDataSourceBody = Type.Object({
  name: Type.Optional(Type.String({ minLength: 1, maxLength: MAX_SOURCE_NAME_LENGTH })),
  graph: Type.Optional(Type.Union([GraphInputSchema, Type.Null()])),
});

export const MAX_QUERY_LENGTH = 100_000;
export const DEFAULT_QUERY_LIMIT = 500;
export const MAX_QUERY_LIMIT = 10_000;
export const DEFAULT_QUERY_TIMEOUT_MS = 60_000;
export const MAX_QUERY_TIMEOUT_MS = 600_000;

export const RunQueryBody = Type.Object({
  query: Type.String({ minLength: 1, maxLength: MAX_QUERY_LENGTH }),
  dialect: Type.Optional(Type.Literal('cypher')),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_QUERY_LIMIT, description: `rows read at most (default ${DEFAULT_QUERY_LIMIT})` })),
  timeout: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_QUERY_TIMEOUT_MS, description: `milliseconds (default ${DEFAULT_QUERY_TIMEOUT_MS})` })),
});

export const RunQueryAnswer = Type.Object({
  nodes: Type.Array(GraphNodeSchema),
  edges: Type.Array(GraphEdgeSchema),
  truncatedByLimit: Type.Boolean(),
  truncatedByAccess: Type.Boolean(),
});

export type GraphInputBody = Static<typeof GraphInputSchema>;
export type DataSourceAnswer = Static<typeof DataSourceSchema>;
export type DataSourceSummary = Static<typeof DataSourceSummarySchema>;
