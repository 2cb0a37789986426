/**
 * What a graph query may do, as the engine itself reads it: the operators of its plan and the functions it calls,
 * on explicit lists, each with why it is safe. Everything not listed is refused, so an operator or function that
 * a new engine version adds is refused until someone reads what it does and lists it here.
 *
 * The service never decides this by reading the query's text: the engine's lexer has comment, string and
 * whitespace rules a second reader gets wrong (issue 39: `/* **\/`, a `//` comment ended by CR, U+180E as a
 * space). The embedded engine's plan is read in embedded/kuzu-plan.ts, the Bolt server's in bolt/bolt-plan.ts.
 * Beneath the lists, the embedded engine's process is confined by the operating system (embedded/confinement.ts),
 * so a mistake here is not a file read.
 */

/**
 * Kùzu 0.11.3's physical operators (PhysicalOperatorUtils::operatorTypeToString) that only read the graph's own
 * tables, or the rows an earlier operator of the same query made. Every user's query may use them.
 */
export const EMBEDDED_READ_OPERATORS: ReadonlyMap<string, string> = new Map([
  ['RESULT_COLLECTOR', 'gathers the rows the query answers, in memory'],
  ['PROJECTION', 'computes expressions over rows already read (Kùzu has no scalar function that reads a file)'],
  ['FILTER', 'drops rows by an expression'],
  ['FLATTEN', 'unnests a factorized row into plain rows'],
  ['SCAN_NODE_TABLE', "reads a node table of the graph's own"],
  ['PRIMARY_KEY_SCAN_NODE_TABLE', "reads a node of the graph's own by its key"],
  ['SCAN_REL_TABLE', "reads a relationship table of the graph's own (one hop)"],
  ['RECURSIVE_EXTEND', "walks the graph's own relationships (variable-length and shortest paths)"],
  ['PATH_PROPERTY_PROBE', 'reads the properties of the nodes and relationships of paths found'],
  ['SEMI_MASKER', 'marks the nodes a later scan may skip'],
  ['DUMMY_SINK', "ends a pipeline of a recursive pattern's plan without answering rows"],
  ['HASH_JOIN_BUILD', 'builds the in-memory side of a join'],
  ['HASH_JOIN_PROBE', 'joins rows against that side'],
  ['INTERSECT_BUILD', 'builds the sides of a worst-case-optimal join (cyclic patterns)'],
  ['INTERSECT', 'intersects those sides'],
  ['CROSS_PRODUCT', 'pairs the rows of two patterns'],
  ['MULTIPLICITY_REDUCER', 'reads factorized rows once each'],
  ['AGGREGATE', 'counts, sums, collects'],
  ['AGGREGATE_FINALIZE', 'ends an aggregation'],
  ['AGGREGATE_SCAN', 'reads an aggregation’s result'],
  ['ORDER_BY', 'sorts rows in memory'],
  ['ORDER_BY_MERGE', 'merges sorted runs'],
  ['ORDER_BY_SCAN', 'reads sorted rows'],
  ['TOP_K', 'keeps the first rows of an ORDER BY … LIMIT'],
  ['TOP_K_SCAN', 'reads them'],
  ['SKIP', 'drops the first rows'],
  ['LIMIT', 'stops after some rows'],
  ['UNWIND', 'turns a list value into rows'],
  ['UNION_ALL_SCAN', 'reads the rows of the parts of a UNION'],
  ['EMPTY_RESULT', 'answers no row (a pattern the planner knows matches nothing)'],
  ['TABLE_FUNCTION_CALL', 'calls a table function: allowed only for the functions of EMBEDDED_TABLE_FUNCTIONS'],
]);

/**
 * The operators a write adds: an Admin's query on a graph whose settings allow writes (graph.allowWrites) may use
 * them besides the reads. Each changes the graph's own tables, in the query's transaction; none reads or writes a
 * file (COPY's BATCH_INSERT and PARTITIONER are not here: loads go through `alert-webhooks graph load`).
 */
export const EMBEDDED_WRITE_OPERATORS: ReadonlyMap<string, string> = new Map([
  ['INSERT', 'creates nodes and relationships'],
  ['SET_PROPERTY', 'changes properties'],
  ['DELETE', 'deletes nodes and relationships'],
  ['MERGE', 'creates what a pattern does not find'],
  ['INDEX_LOOKUP', "finds a created relationship's ends by their keys"],
  ['CREATE_TABLE', 'creates a node or relationship table in the graph'],
  ['DROP', 'drops a table of the graph'],
  ['ALTER', 'changes a table of the graph (add, drop or rename a property, rename the table)'],
]);

/**
 * Table functions a query may call (TABLE_FUNCTION_CALL's `Function:`). None reads or writes a file, changes a
 * setting or keeps state on the connection. Refused among others: READ_CSV_*, READ_PARQUET, READ_NPY, JSON_SCAN
 * (LOAD FROM and CALL reach files through them), FILE_INFO, CURRENT_SETTING (the engine's home and search paths),
 * SHOW_WARNINGS (lines of files a COPY read), the projected-graph functions (state kept on a pooled connection),
 * STORAGE_INFO, STATS_INFO, FSM_INFO and BM_INFO (the engine's internals).
 */
export const EMBEDDED_TABLE_FUNCTIONS: ReadonlyMap<string, string> = new Map([
  ['READ_FTABLE', "reads rows an earlier operator of the same query made (Kùzu's plans use it for RETURN 1, OPTIONAL MATCH, writes)"],
  ['SHOW_TABLES', "lists the graph's tables"],
  ['TABLE_INFO', "lists a table's properties"],
  ['SHOW_CONNECTION', "lists a relationship table's node tables"],
  ['SHOW_INDEXES', "lists the graph's indexes"],
  ['SHOW_SEQUENCES', "lists the graph's sequences"],
  ['SHOW_FUNCTIONS', 'lists the functions there are'],
  ['DB_VERSION', "the engine's version"],
  ['CATALOG_VERSION', "the catalogue's version number"],
]);

/** Operators that write: a read-only run that plans one is a write (`write_forbidden`), which an Admin may run again as one. */
export function isEmbeddedWrite(operator: string): boolean {
  return EMBEDDED_WRITE_OPERATORS.has(operator);
}

// ─── Bolt: Neo4j 5 and Memgraph ──────────────────────────────────────────────────────────────────────────────────
//
// Read in bolt/bolt-plan.ts from the server's answer to `EXPLAIN <query>`: Neo4j's structured plan (each operator's
// name, its `Details`, its children, and the query type) or Memgraph's plan as lines of text (` * ScanAll (n)`).
// The server's own user rights stay the last word beneath these lists (docs/graph.md, "Inside the graph only").

/**
 * Neo4j 5's plan operators (the name before "@neo4j") that only read the database's own nodes, relationships,
 * indexes and counts, or rows an earlier operator of the same query made. Every user's query may use them.
 */
export const BOLT_NEO4J_READ_OPERATORS: ReadonlyMap<string, string> = new Map([
  ['ProduceResults', 'answers the rows'],
  ['EmptyResult', 'reads its input to the end and answers no row'],
  ['Argument', 'passes the outer row into a nested plan'],
  ['ArgumentTracker', 'tracks those outer rows (no data of its own)'],
  ['AllNodesScan', "reads the database's nodes"],
  ['PartitionedAllNodesScan', 'the same, split for the parallel runtime'],
  ['NodeByLabelScan', 'reads the nodes of a label'],
  ['PartitionedNodeByLabelScan', 'the same, split for the parallel runtime'],
  ['IntersectionNodeByLabelsScan', 'reads the nodes having all of several labels'],
  ['PartitionedIntersectionNodeByLabelsScan', 'the same, split for the parallel runtime'],
  ['UnionNodeByLabelsScan', 'reads the nodes having any of several labels'],
  ['PartitionedUnionNodeByLabelsScan', 'the same, split for the parallel runtime'],
  ['SubtractionNodeByLabelsScan', 'reads the nodes having some labels and not others'],
  ['PartitionedSubtractionNodeByLabelsScan', 'the same, split for the parallel runtime'],
  ['NodeByIdSeek', 'reads nodes by internal id'],
  ['NodeByElementIdSeek', 'reads nodes by element id'],
  ['NodeIndexSeek', 'reads nodes through an index'],
  ['PartitionedNodeIndexSeek', 'the same, split for the parallel runtime'],
  ['NodeUniqueIndexSeek', 'reads nodes through a uniqueness constraint’s index'],
  ['NodeIndexSeekByRange', 'reads nodes through an index, by a range'],
  ['PartitionedNodeIndexSeekByRange', 'the same, split for the parallel runtime'],
  ['NodeUniqueIndexSeekByRange', 'reads nodes through a unique index, by a range'],
  ['MultiNodeIndexSeek', 'several index seeks at once'],
  ['AssertingMultiNodeIndexSeek', 'index seeks that must find the same node'],
  ['NodeIndexScan', 'reads a whole node index'],
  ['PartitionedNodeIndexScan', 'the same, split for the parallel runtime'],
  ['NodeIndexContainsScan', 'reads a text index by CONTAINS'],
  ['NodeIndexEndsWithScan', 'reads a text index by ENDS WITH'],
  ['DirectedRelationshipIndexSeek', 'reads relationships through an index'],
  ['UndirectedRelationshipIndexSeek', 'the same, either direction'],
  ['PartitionedDirectedRelationshipIndexSeek', 'the same, split for the parallel runtime'],
  ['PartitionedUndirectedRelationshipIndexSeek', 'the same, split for the parallel runtime'],
  ['DirectedRelationshipIndexSeekByRange', 'reads relationships through an index, by a range'],
  ['UndirectedRelationshipIndexSeekByRange', 'the same, either direction'],
  ['PartitionedDirectedRelationshipIndexSeekByRange', 'the same, split for the parallel runtime'],
  ['PartitionedUndirectedRelationshipIndexSeekByRange', 'the same, split for the parallel runtime'],
  ['DirectedRelationshipUniqueIndexSeek', 'reads relationships through a unique index'],
  ['UndirectedRelationshipUniqueIndexSeek', 'the same, either direction'],
  ['DirectedRelationshipUniqueIndexSeekByRange', 'reads relationships through a unique index, by a range'],
  ['UndirectedRelationshipUniqueIndexSeekByRange', 'the same, either direction'],
  ['AssertingMultiRelationshipIndexSeek', 'relationship index seeks that must find the same relationship'],
  ['DirectedRelationshipIndexScan', 'reads a whole relationship index'],
  ['UndirectedRelationshipIndexScan', 'the same, either direction'],
  ['PartitionedDirectedRelationshipIndexScan', 'the same, split for the parallel runtime'],
  ['PartitionedUndirectedRelationshipIndexScan', 'the same, split for the parallel runtime'],
  ['DirectedRelationshipIndexContainsScan', 'reads a relationship text index by CONTAINS'],
  ['UndirectedRelationshipIndexContainsScan', 'the same, either direction'],
  ['DirectedRelationshipIndexEndsWithScan', 'reads a relationship text index by ENDS WITH'],
  ['UndirectedRelationshipIndexEndsWithScan', 'the same, either direction'],
  ['DirectedRelationshipByIdSeek', 'reads relationships by internal id'],
  ['UndirectedRelationshipByIdSeek', 'the same, either direction'],
  ['DirectedRelationshipByElementIdSeek', 'reads relationships by element id'],
  ['UndirectedRelationshipByElementIdSeek', 'the same, either direction'],
  ['DirectedAllRelationshipsScan', "reads the database's relationships"],
  ['UndirectedAllRelationshipsScan', 'the same, either direction'],
  ['PartitionedDirectedAllRelationshipsScan', 'the same, split for the parallel runtime'],
  ['PartitionedUndirectedAllRelationshipsScan', 'the same, split for the parallel runtime'],
  ['DirectedRelationshipTypeScan', 'reads the relationships of a type'],
  ['UndirectedRelationshipTypeScan', 'the same, either direction'],
  ['PartitionedDirectedRelationshipTypeScan', 'the same, split for the parallel runtime'],
  ['PartitionedUndirectedRelationshipTypeScan', 'the same, split for the parallel runtime'],
  ['DirectedUnionRelationshipTypesScan', 'reads the relationships of several types'],
  ['UndirectedUnionRelationshipTypesScan', 'the same, either direction'],
  ['PartitionedDirectedUnionRelationshipTypesScan', 'the same, split for the parallel runtime'],
  ['PartitionedUndirectedUnionRelationshipTypesScan', 'the same, split for the parallel runtime'],
  ['NodeCountFromCountStore', 'reads a node count the database keeps'],
  ['RelationshipCountFromCountStore', 'reads a relationship count the database keeps'],
  ['Expand(All)', 'follows relationships (one hop)'],
  ['Expand(Into)', 'finds the relationships between two known nodes'],
  ['OptionalExpand(All)', 'the same, for OPTIONAL MATCH'],
  ['OptionalExpand(Into)', 'the same, for OPTIONAL MATCH'],
  ['VarLengthExpand(All)', 'follows variable-length paths'],
  ['VarLengthExpand(Into)', 'the same, between two known nodes'],
  ['VarLengthExpand(Pruning)', 'the same, keeping only the distinct end nodes'],
  ['VarLengthExpand(Pruning,BFS)', 'the same, breadth-first'],
  ['VarLengthExpand(Pruning,BFS,All)', 'the same, breadth-first'],
  ['VarLengthExpand(Pruning,BFS,Into)', 'the same, breadth-first, between two known nodes'],
  ['ShortestPath', 'finds shortest paths'],
  ['StatefulShortestPath(All)', 'finds shortest paths of a quantified pattern (SHORTEST, ANY)'],
  ['StatefulShortestPath(Into)', 'the same, between two known nodes'],
  ['Repeat(Trail)', 'walks a quantified path pattern'],
  ['Repeat(Walk)', 'the same, repeated relationships allowed'],
  ['Trail', 'walks a quantified path pattern (Neo4j 5.9 and earlier)'],
  ['NullifyMetadata', 'clears bookkeeping between the steps of a quantified pattern'],
  ['ProjectEndpoints', 'finds the end nodes of known relationships'],
  ['ProjectEndpoints(BOTH)', 'the same, either direction'],
  ['Filter', 'drops rows by a predicate (its functions are checked, see BOLT_NEO4J_FUNCTIONS)'],
  ['Projection', 'computes expressions over rows (its functions are checked, see BOLT_NEO4J_FUNCTIONS)'],
  ['CacheProperties', 'reads properties ahead of their use'],
  ['RemoteBatchProperties', "reads properties of a composite database's constituents"],
  ['Limit', 'stops after some rows'],
  ['ExhaustiveLimit', 'the same, reading its input to the end'],
  ['Skip', 'drops the first rows'],
  ['Sort', 'sorts rows in memory'],
  ['PartialSort', 'sorts rows already partly in order'],
  ['Top', 'keeps the first rows of an ORDER BY … LIMIT'],
  ['Top1WithTies', 'keeps the first rows and their ties'],
  ['PartialTop', 'the same, on rows already partly in order'],
  ['Distinct', 'drops repeated rows'],
  ['OrderedDistinct', 'the same, on rows in order'],
  ['EagerAggregation', 'counts, sums, collects'],
  ['OrderedAggregation', 'the same, on rows in order'],
  ['Eager', 'reads all its input before passing it on'],
  ['PreserveOrder', 'keeps the order of rows'],
  ['Unwind', 'turns a list value into rows'],
  ['PartitionedUnwind', 'the same, split for the parallel runtime'],
  ['Optional', 'answers a null row where its input answers none'],
  ['Anti', 'answers a row where its input answers none'],
  ['Apply', 'runs a nested read for each row'],
  ['SemiApply', 'keeps the rows a nested pattern matches'],
  ['AntiSemiApply', 'keeps the rows a nested pattern does not match'],
  ['LetSemiApply', 'marks the rows a nested pattern matches'],
  ['LetAntiSemiApply', 'marks the rows a nested pattern does not match'],
  ['SelectOrSemiApply', 'a predicate or a nested pattern'],
  ['SelectOrAntiSemiApply', 'a predicate or a pattern that does not match'],
  ['LetSelectOrSemiApply', 'the same, marking rows'],
  ['LetSelectOrAntiSemiApply', 'the same, marking rows'],
  ['ConditionalApply', 'runs a nested read where a variable is set'],
  ['AntiConditionalApply', 'runs a nested read where a variable is not set'],
  ['RollUpApply', 'collects a nested read (pattern comprehension) into a list'],
  ['TriadicSelection', 'keeps or drops triangles of friends-of-friends'],
  ['TriadicBuild', 'the build side of that'],
  ['TriadicFilter', 'the filter side of that'],
  ['CartesianProduct', 'pairs the rows of two patterns'],
  ['NodeHashJoin', 'joins two patterns on nodes'],
  ['NodeLeftOuterHashJoin', 'the same, for OPTIONAL MATCH'],
  ['NodeRightOuterHashJoin', 'the same, for OPTIONAL MATCH'],
  ['ValueHashJoin', 'joins two patterns on a value'],
  ['Union', 'answers the rows of both sides of a UNION'],
  ['OrderedUnion', 'the same, keeping their order'],
  ['AssertSameNode', 'checks that two reads found the same node (MERGE on constraints)'],
  ['AssertSameRelationship', 'checks that two reads found the same relationship'],
]);

/**
 * The operators a write adds on Neo4j: an Admin's query on a graph whose settings allow writes (graph.allowWrites).
 * Each changes the database's own nodes and relationships inside the run's transaction; a read-only run that plans
 * one is refused with `write_forbidden`.
 */
export const BOLT_NEO4J_WRITE_OPERATORS: ReadonlyMap<string, string> = new Map([
  ['Create', 'creates nodes and relationships'],
  ['Merge', 'matches or creates a pattern'],
  ['LockingMerge', 'the same, under locks'],
  ['LockNodes', 'locks nodes for a MERGE'],
  ['NodeUniqueIndexSeek(Locking)', 'reads a node through a unique index, locking it for a MERGE'],
  ['Delete', 'deletes nodes or relationships'],
  ['DetachDelete', 'deletes nodes with their relationships'],
  ['SetLabels', 'adds labels'],
  ['RemoveLabels', 'removes labels'],
  ['SetProperty', 'sets a property'],
  ['SetProperties', 'sets properties'],
  ['SetPropertiesFromMap', 'sets properties from a map'],
  ['SetNodeProperty', 'sets a node property'],
  ['SetNodeProperties', 'sets node properties'],
  ['SetNodePropertiesFromMap', 'sets node properties from a map'],
  ['SetRelationshipProperty', 'sets a relationship property'],
  ['SetRelationshipProperties', 'sets relationship properties'],
  ['SetRelationshipPropertiesFromMap', 'sets relationship properties from a map'],
  ['RemoveProperty', 'removes a property'],
  ['Foreach', 'runs write clauses for each item of a list'],
  ['SubqueryForeach', 'runs a writing CALL { … } subquery for each row'],
]);

/**
 * Why an operator is refused whatever the run, to say so in the refusal. Every operator on neither list above is
 * refused too (schema and administration commands, SHOW commands, system procedures, anything a new version adds).
 */
export const BOLT_REFUSED_OPERATORS: ReadonlyMap<string, string> = new Map([
  ['LoadCSV', 'LOAD CSV reads files and URLs the server can reach'],
  ['LoadCsv', 'LOAD CSV reads files the server can reach'],
  ['LoadParquet', 'LOAD PARQUET reads files the server can reach'],
  ['LoadJsonl', 'LOAD JSONL reads files the server can reach'],
  ['TransactionApply', 'CALL { … } IN TRANSACTIONS commits outside the run’s transaction'],
  ['TransactionForeach', 'CALL { … } IN TRANSACTIONS commits outside the run’s transaction'],
  ['PeriodicCommit', 'USING PERIODIC COMMIT commits outside the run’s transaction'],
  ['PeriodicSubquery', 'CALL { … } IN TRANSACTIONS commits outside the run’s transaction'],
  ['CallProcedure', "Memgraph's plan does not name the procedure a CALL runs, so no procedure call is allowed there"],
  ['RunQueryAt', "runs part of the query on another database of a composite database"],
]);

/**
 * Procedures a query may CALL on Neo4j (ProcedureCall's Details: "db.labels() :: (label :: STRING)"). Each lists
 * the database's own schema, in the graph user's rights, and reads nothing else. Every other procedure, APOC's
 * included (apoc.load.*, apoc.cypher.*, apoc.periodic.* reach files, URLs or run queries the plan does not show),
 * is refused.
 */
export const BOLT_PROCEDURES: ReadonlyMap<string, string> = new Map([
  ['db.labels', "lists the database's labels"],
  ['db.relationshipTypes', "lists the database's relationship types"],
  ['db.propertyKeys', "lists the database's property keys"],
  ['db.schema.visualization', "answers the database's schema as a small graph"],
  ['db.schema.nodeTypeProperties', 'lists the properties of each label'],
  ['db.schema.relTypeProperties', 'lists the properties of each relationship type'],
]);

/**
 * Namespaced functions a query may call on Neo4j, in lower case (Neo4j matches built-in function names without
 * case). A function has no operator of its own: the plan shows it only as text in an operator's Details
 * ("apoc.text.join(…) AS x"), so bolt-plan.ts finds every `name.space(` there and refuses the names not listed.
 * Listed: Neo4j 5's own namespaced functions, which compute a value from their arguments and read nothing.
 * Not listed, so refused: every user-defined function, APOC's included, since a plugin's function is code the
 * plan cannot see into (apoc.cypher.runFirstColumn* runs a query of its own, apoc.static.* reads configuration).
 */
export const BOLT_NEO4J_FUNCTIONS: ReadonlyMap<string, string> = new Map([
  ...['date', 'datetime', 'localdatetime', 'localtime', 'time'].flatMap((type): [string, string][] => [
    [`${type}.truncate`, `truncates a ${type} value`],
    [`${type}.realtime`, 'the current time'],
    [`${type}.statement`, 'the current time'],
    [`${type}.transaction`, 'the current time'],
  ]),
  ['datetime.fromepoch', 'a datetime from seconds since the epoch'],
  ['datetime.fromepochmillis', 'a datetime from milliseconds since the epoch'],
  ['duration.between', 'the duration between two temporal values'],
  ['duration.inmonths', 'the same, in months'],
  ['duration.indays', 'the same, in days'],
  ['duration.inseconds', 'the same, in seconds'],
  ['point.distance', 'the distance between two points'],
  ['point.withinbbox', 'whether a point is within a box'],
  ['vector.similarity.cosine', 'the cosine similarity of two vectors'],
  ['vector.similarity.euclidean', 'the Euclidean similarity of two vectors'],
  ['db.namefromelementid', 'the database name within an element id'],
]);

/**
 * Memgraph's plan operators (its EXPLAIN answers them as lines of text, ` * ScanAllByLabel (n :Client)`) that only
 * read the graph's own nodes, relationships and indexes, or rows an earlier operator made.
 */
export const BOLT_MEMGRAPH_READ_OPERATORS: ReadonlyMap<string, string> = new Map([
  ['Once', 'starts every plan with one empty row'],
  ['Produce', 'answers the rows'],
  ['ScanAll', "reads the graph's nodes"],
  ['ScanAllByLabel', 'reads the nodes of a label'],
  ['ScanAllByLabelProperties', 'reads nodes through a label and property index'],
  ['ScanAllByLabelProperty', 'the same (earlier versions)'],
  ['ScanAllByLabelPropertyValue', 'the same, by a value (earlier versions)'],
  ['ScanAllByLabelPropertyRange', 'the same, by a range (earlier versions)'],
  ['ScanAllById', 'reads nodes by id'],
  ['ScanAllByEdge', "reads the graph's relationships"],
  ['ScanAllByEdgeType', 'reads the relationships of a type'],
  ['ScanAllByEdgeTypeProperty', 'reads relationships through an index'],
  ['ScanAllByEdgeTypePropertyValue', 'the same, by a value'],
  ['ScanAllByEdgeTypePropertyRange', 'the same, by a range'],
  ['ScanAllByEdgeProperty', 'reads relationships through a property index'],
  ['ScanAllByEdgePropertyValue', 'the same, by a value'],
  ['ScanAllByEdgePropertyRange', 'the same, by a range'],
  ['ScanAllByEdgeId', 'reads relationships by id'],
  ['ScanAllByPointDistance', 'reads nodes through a point index, by distance'],
  ['ScanAllByPointWithinbbox', 'reads nodes through a point index, within a box'],
  ['Expand', 'follows relationships (one hop)'],
  ['ExpandVariable', 'follows variable-length paths (depth first)'],
  ['BFSExpand', 'the same, breadth first'],
  ['STShortestPath', 'shortest path between two known nodes'],
  ['WeightedShortestPath', 'weighted shortest path'],
  ['AllShortestPaths', 'all weighted shortest paths'],
  ['ConstructNamedPath', 'builds a path value from matched items'],
  ['Filter', 'drops rows by a predicate'],
  ['EdgeUniquenessFilter', 'drops rows that use a relationship twice'],
  ['EvaluatePatternFilter', 'evaluates a pattern used as a predicate'],
  ['Optional', 'answers a null row where its branch answers none'],
  ['Cartesian', 'pairs the rows of two patterns'],
  ['HashJoin', 'joins two patterns on a value'],
  ['IndexedJoin', 'joins two patterns through an index'],
  ['Apply', 'runs a nested read (CALL { … } subquery) for each row'],
  ['RollUpApply', 'collects a nested read into a list'],
  ['Accumulate', 'reads all its input before passing it on'],
  ['Aggregate', 'counts, sums, collects'],
  ['Skip', 'drops the first rows'],
  ['Limit', 'stops after some rows'],
  ['OrderBy', 'sorts rows'],
  ['Distinct', 'drops repeated rows'],
  ['Union', 'answers the rows of both sides of a UNION'],
  ['Unwind', 'turns a list value into rows'],
  ['EmptyResult', 'reads its input to the end and answers no row'],
]);

/** The operators a write adds on Memgraph (graph.allowWrites): each changes the graph inside the run's transaction. */
export const BOLT_MEMGRAPH_WRITE_OPERATORS: ReadonlyMap<string, string> = new Map([
  ['CreateNode', 'creates a node'],
  ['CreateExpand', 'creates a relationship (and its new end node)'],
  ['Delete', 'deletes nodes or relationships'],
  ['SetProperty', 'sets a property'],
  ['SetProperties', 'sets properties'],
  ['SetNestedProperty', 'sets a property inside a map property'],
  ['SetLabels', 'adds labels'],
  ['RemoveProperty', 'removes a property'],
  ['RemoveNestedProperty', 'removes a property inside a map property'],
  ['RemoveLabels', 'removes labels'],
  ['Merge', 'matches or creates a pattern'],
  ['Foreach', 'runs write clauses for each item of a list'],
]);
