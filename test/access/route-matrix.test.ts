import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAlert, createSource, reportMatches } from '../support/fixtures.js';
import { ApiClient, signIn, startTestService, type ApiAnswer, type TestService } from '../support/test-service.js';

/**
 * Issue 40, "How to show it": every source-scoped user route × three custom groups with different rights (and a group
 * of another source, and the built-in Analyst) × a session and an API key: allowed (the Admin's answer), filtered (the
 * exact items) or refused as if the thing did not exist, never more. The table must name every declared
 * /api/:sourceKey/ user route: a route added without its row fails the completeness test.
 *
 * The rights are written with SQL (the groups API is another file's), on an embedded graph:
 *   (alice:Person)-[:KNOWS {since, note}]->(bob:Person), alice and bob -[:WORKS_AT {role}]-> (acme:Company)
 * with property-key rights on for the source `fraud`.
 */

type Profile = 'full' | 'person' | 'none' | 'other' | 'analyst';
const PROFILES: readonly Profile[] = ['full', 'person', 'none', 'other', 'analyst'];

interface Call {
  method: 'GET' | 'POST';
  url: string;
  body?: unknown;
}
/** What a caller gets: the Admin's own answer to the same call, or this status and body, or a body made `from` the Admin's answer. */
type Outcome = 'asAdmin' | { status: number; body?: unknown; from?: (admin: ApiAnswer) => unknown };
interface Case {
  call: Call;
  expected: Record<Profile, Outcome>;
  /** A call that changes something: the Admin's answer is not asked for (it would change it too). */
  changes?: boolean;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

const unknownSource = (key: string) => ({ status: 400, body: { key: 'dataSource_unavailable', message: `no data source has the key "${key}"` } });
const unknown = (what: string, id: number | string) => ({ status: 404, body: { key: 'not_found', message: `${what} ${id} was not found` } });
const noRawRead = (what: string) => ({ status: 403, body: { key: 'forbidden', message: `${what} needs the "rawReadQuery" right on data source "fraud"` } });

/** On `fraud`: `full`, `analyst` as the Admin; `person` and `none` as given; `other` does not see the source. */
const onFraud = (person: Outcome, none: Outcome, full: Outcome = 'asAdmin'): Record<Profile, Outcome> => ({ full, person, none, other: unknownSource('fraud'), analyst: 'asAdmin' });
/** On `other`: its group and the Analyst as the Admin; the groups of `fraud` do not see it. */
const onOther = (): Record<Profile, Outcome> => ({ full: unknownSource('other'), person: unknownSource('other'), none: unknownSource('other'), other: 'asAdmin', analyst: 'asAdmin' });

interface World {
  ids: { alice: string; bob: string; acme: string; knows: string; aliceWorks: string; bobWorks: string };
  /** Alert A (full reads it), B (person reads it) on fraud; C on other. */
  alerts: { a: number; b: number; c: number };
  cases: { a: number; b: number; c: number };
  groups: Record<Profile, number>;
}

/** An item as `person` reads it: Person's id and name, KNOWS's since. */
function asPerson(item: Json): Json {
  const keep = item.data.categories ? ['id', 'name'] : ['since'];
  return { ...item, data: { ...item.data, properties: Object.fromEntries(Object.entries(item.data.properties).filter(([key]) => keep.includes(key))) } };
}
const personReads = (item: Json) => (item.data.categories ? item.data.categories.every((c: string) => c === 'Person') : item.data.type === 'KNOWS');
const byId = (a: { id: string }, b: { id: string }) => a.id.localeCompare(b.id);
const sortedItems = (answer: Json) => ({ ...answer, nodes: [...answer.nodes].sort(byId), edges: [...answer.edges].sort(byId) });

const ROUTES: Record<string, (w: World) => Case[]> = {
  'GET /api/:sourceKey/alerts': () => [
    {
      call: { method: 'GET', url: '/api/fraud/alerts' },
      expected: {
        ...onFraud(
          { status: 200, from: (admin) => ({ totalCount: 1, items: admin.body.items.filter((a: Json) => a.title === 'B') }) },
          { status: 200, body: { totalCount: 0, items: [] } },
          { status: 200, from: (admin) => ({ totalCount: 1, items: admin.body.items.filter((a: Json) => a.title === 'A') }) },
        ),
      },
    },
    { call: { method: 'GET', url: '/api/other/alerts' }, expected: onOther() },
  ],
  'GET /api/:sourceKey/alerts/:alertId': ({ alerts }) => [
    { call: { method: 'GET', url: `/api/fraud/alerts/${alerts.a}` }, expected: onFraud(unknown('alert', alerts.a), unknown('alert', alerts.a)) },
    { call: { method: 'GET', url: `/api/fraud/alerts/${alerts.b}` }, expected: onFraud('asAdmin', unknown('alert', alerts.b), unknown('alert', alerts.b)) },
    { call: { method: 'GET', url: `/api/other/alerts/${alerts.c}` }, expected: onOther() },
  ],
  'GET /api/:sourceKey/alerts/:alertId/runs': ({ alerts }) => [
    { call: { method: 'GET', url: `/api/fraud/alerts/${alerts.a}/runs` }, expected: onFraud(unknown('alert', alerts.a), unknown('alert', alerts.a)) },
    { call: { method: 'GET', url: `/api/fraud/alerts/${alerts.b}/runs` }, expected: onFraud('asAdmin', unknown('alert', alerts.b), unknown('alert', alerts.b)) },
    { call: { method: 'GET', url: `/api/other/alerts/${alerts.c}/runs` }, expected: onOther() },
  ],
  'GET /api/:sourceKey/alerts/:alertId/cases': ({ alerts }) => [
    { call: { method: 'GET', url: `/api/fraud/alerts/${alerts.a}/cases` }, expected: onFraud(unknown('alert', alerts.a), unknown('alert', alerts.a)) },
    { call: { method: 'GET', url: `/api/fraud/alerts/${alerts.b}/cases` }, expected: onFraud('asAdmin', unknown('alert', alerts.b), unknown('alert', alerts.b)) },
    { call: { method: 'GET', url: `/api/other/alerts/${alerts.c}/cases` }, expected: onOther() },
  ],
  'GET /api/:sourceKey/alerts/:alertId/cases/:caseId': ({ alerts, cases }) => {
    const caseB = `/api/fraud/alerts/${alerts.b}/cases/${cases.b}`;
    return [
      // The Admin's answer says nothing was left out; full's filter (property-key rights on, every key read) leaves nothing out.
      { call: { method: 'GET', url: `/api/fraud/alerts/${alerts.a}/cases/${cases.a}` }, expected: onFraud(unknown('alert', alerts.a), unknown('alert', alerts.a)) },
      {
        call: { method: 'GET', url: caseB },
        expected: onFraud(
          {
            status: 200,
            from: (admin) => ({
              ...admin.body,
              graph: { nodes: admin.body.graph.nodes.filter(personReads).map(asPerson), edges: admin.body.graph.edges.filter((e: Json) => e.data.type === 'KNOWS').map(asPerson) },
              truncatedByAccess: true,
            }),
          },
          unknown('alert', alerts.b),
          unknown('alert', alerts.b),
        ),
      },
      {
        // A page of edges alone: their ends are on the page before, fetched to judge them (KNOWS: two Persons).
        call: { method: 'GET', url: `${caseB}?graphOffset=3&graphLimit=5` },
        expected: onFraud(
          { status: 200, from: (admin) => ({ ...admin.body, graph: { nodes: [], edges: admin.body.graph.edges.filter((e: Json) => e.data.type === 'KNOWS').map(asPerson) }, truncatedByAccess: true }) },
          unknown('alert', alerts.b),
          unknown('alert', alerts.b),
        ),
      },
      { call: { method: 'GET', url: `/api/other/alerts/${alerts.c}/cases/${cases.c}` }, expected: onOther() },
    ];
  },
  'POST /api/:sourceKey/alerts/:alertId/cases/:caseId/action': ({ alerts, cases }) => {
    const done = { status: 204 };
    return [
      { call: { method: 'POST', url: `/api/fraud/alerts/${alerts.a}/cases/${cases.a}/action`, body: { action: 'comment', comment: 'seen' } }, changes: true, expected: { ...onFraud(unknown('alert', alerts.a), unknown('alert', alerts.a), done), analyst: done } },
      { call: { method: 'POST', url: `/api/fraud/alerts/${alerts.b}/cases/${cases.b}/action`, body: { action: 'comment', comment: 'seen' } }, changes: true, expected: { ...onFraud(done, unknown('alert', alerts.b), unknown('alert', alerts.b)), analyst: done } },
      { call: { method: 'POST', url: `/api/other/alerts/${alerts.c}/cases/${cases.c}/action`, body: { action: 'comment', comment: 'seen' } }, changes: true, expected: { ...onOther(), other: done, analyst: done } },
    ];
  },
  'GET /api/:sourceKey/alerts/:alertId/cases/:caseId/actions': ({ alerts, cases }) => [
    { call: { method: 'GET', url: `/api/fraud/alerts/${alerts.a}/cases/${cases.a}/actions` }, expected: onFraud(unknown('alert', alerts.a), unknown('alert', alerts.a)) },
    { call: { method: 'GET', url: `/api/fraud/alerts/${alerts.b}/cases/${cases.b}/actions` }, expected: onFraud('asAdmin', unknown('alert', alerts.b), unknown('alert', alerts.b)) },
    { call: { method: 'GET', url: `/api/other/alerts/${alerts.c}/cases/${cases.c}/actions` }, expected: onOther() },
  ],
  'GET /api/:sourceKey/alerts/:alertId/cases/:caseId/matches': ({ alerts, cases }) => [
    { call: { method: 'GET', url: `/api/fraud/alerts/${alerts.a}/cases/${cases.a}/matches` }, expected: onFraud(unknown('alert', alerts.a), unknown('alert', alerts.a)) },
    { call: { method: 'GET', url: `/api/fraud/alerts/${alerts.b}/cases/${cases.b}/matches` }, expected: onFraud('asAdmin', unknown('alert', alerts.b), unknown('alert', alerts.b)) },
    { call: { method: 'GET', url: `/api/other/alerts/${alerts.c}/cases/${cases.c}/matches` }, expected: onOther() },
  ],
  'GET /api/:sourceKey/alerts/:alertId/users': ({ alerts }) => [
    { call: { method: 'GET', url: `/api/fraud/alerts/${alerts.a}/users` }, expected: onFraud(unknown('alert', alerts.a), unknown('alert', alerts.a)) },
    { call: { method: 'GET', url: `/api/fraud/alerts/${alerts.b}/users` }, expected: onFraud('asAdmin', unknown('alert', alerts.b), unknown('alert', alerts.b)) },
    { call: { method: 'GET', url: `/api/other/alerts/${alerts.c}/users` }, expected: onOther() },
  ],
  // Unassigning (userId null) changes nothing here: what is checked is who may ask.
  'POST /api/:sourceKey/alerts/:alertId/cases/assignments': ({ alerts, cases }) => {
    const done = { status: 204 };
    return [
      { call: { method: 'POST', url: `/api/fraud/alerts/${alerts.a}/cases/assignments`, body: { caseIds: [cases.a], userId: null } }, changes: true, expected: { ...onFraud(unknown('alert', alerts.a), unknown('alert', alerts.a), done), analyst: done } },
      { call: { method: 'POST', url: `/api/fraud/alerts/${alerts.b}/cases/assignments`, body: { caseIds: [cases.b], userId: null } }, changes: true, expected: { ...onFraud(done, unknown('alert', alerts.b), unknown('alert', alerts.b)), analyst: done } },
      { call: { method: 'POST', url: `/api/other/alerts/${alerts.c}/cases/assignments`, body: { caseIds: [cases.c], userId: null } }, changes: true, expected: { ...onOther(), other: done, analyst: done } },
    ];
  },
  // The alerts are in the body: each is one the caller must read.
  'POST /api/:sourceKey/alerts/cases/assignments': ({ alerts, cases }) => {
    const done = { status: 204 };
    const assign = (alertId: number, caseId: number) => ({ casesPerAlert: [{ alertId, caseIds: [caseId] }], assignedUserId: null });
    return [
      { call: { method: 'POST', url: '/api/fraud/alerts/cases/assignments', body: assign(alerts.a, cases.a) }, changes: true, expected: { ...onFraud(unknown('alert', alerts.a), unknown('alert', alerts.a), done), analyst: done } },
      { call: { method: 'POST', url: '/api/fraud/alerts/cases/assignments', body: assign(alerts.b, cases.b) }, changes: true, expected: { ...onFraud(done, unknown('alert', alerts.b), unknown('alert', alerts.b)), analyst: done } },
      { call: { method: 'POST', url: '/api/other/alerts/cases/assignments', body: assign(alerts.c, cases.c) }, changes: true, expected: { ...onOther(), other: done, analyst: done } },
    ];
  },
  // A source's groups and their users: for whoever sees the source.
  'GET /api/:sourceKey/groups': () => [
    { call: { method: 'GET', url: '/api/fraud/groups' }, expected: onFraud('asAdmin', 'asAdmin') },
    { call: { method: 'GET', url: '/api/other/groups' }, expected: onOther() },
  ],
  'GET /api/:sourceKey/groups/:groupId/users': ({ groups }) => [
    { call: { method: 'GET', url: `/api/fraud/groups/${groups.full}/users` }, expected: onFraud('asAdmin', 'asAdmin') },
    { call: { method: 'GET', url: `/api/other/groups/${groups.other}/users` }, expected: onOther() },
  ],
  'POST /api/:sourceKey/graph/run/query': () => [
    {
      call: { method: 'POST', url: '/api/fraud/graph/run/query', body: { query: 'MATCH (a)-[r]->(b) RETURN a, r, b' } },
      expected: onFraud(
        { status: 200, from: (admin) => ({ truncatedByLimit: false, truncatedByAccess: true, nodes: admin.body.nodes.filter(personReads).map(asPerson), edges: admin.body.edges.filter((e: Json) => e.data.type === 'KNOWS').map(asPerson) }) },
        noRawRead('a graph query'),
      ),
    },
    // Persons alone: nothing of what person reads is left out but ssn.
    {
      call: { method: 'POST', url: '/api/fraud/graph/run/query', body: { query: "MATCH (a:Person) WHERE a.id = 'alice' RETURN a" } },
      expected: onFraud({ status: 200, from: (admin) => ({ ...admin.body, nodes: admin.body.nodes.map(asPerson), truncatedByAccess: true }) }, noRawRead('a graph query')),
    },
    // A write is the Admin's alone, whatever the rights.
    {
      call: { method: 'POST', url: '/api/fraud/graph/run/query', body: { query: "CREATE (:Company {id: 'evil', name: 'Evil'})" } },
      changes: true,
      expected: {
        ...onFraud({ status: 403, body: { key: 'forbidden', message: 'this query writes to the graph: only Admins may run write queries', field: 'query' } }, noRawRead('a graph query')),
        full: { status: 403, body: { key: 'forbidden', message: 'this query writes to the graph: only Admins may run write queries', field: 'query' } },
        analyst: { status: 403, body: { key: 'forbidden', message: 'this query writes to the graph: only Admins may run write queries', field: 'query' } },
      },
    },
    { call: { method: 'POST', url: '/api/other/graph/run/query', body: { query: 'RETURN 1' } }, expected: onOther() },
  ],
  'POST /api/:sourceKey/graph/alertPreview': () => {
    const query = 'MATCH (a:Person)-[r]->(b) RETURN a, r, b';
    const columnsRefused = { status: 403, body: { key: 'forbidden', field: 'columns', message: 'a preview\'s columns are computed by its query from anything it reads, and your groups may not read the whole graph of data source "fraud": preview without columns' } };
    return [
      {
        call: { method: 'POST', url: '/api/fraud/graph/alertPreview', body: { query, limit: 10 } },
        expected: onFraud(
          {
            status: 200,
            // Each row alone: an edge is kept only beside its two ends in that row.
            from: (admin) =>
              admin.body.map((row: Json) => {
                const nodes = row.nodes.filter(personReads);
                const edges = row.edges.filter((e: Json) => e.data.type === 'KNOWS' && nodes.some((n: Json) => n.id === e.data.target));
                return { nodes: nodes.map(asPerson), edges: edges.map(asPerson), columns: [] };
              }),
          },
          noRawRead('an alert preview'),
        ),
      },
      {
        call: { method: 'POST', url: '/api/fraud/graph/alertPreview', body: { query: `${query}, a.ssn AS ssn`, columns: [{ type: 'string', columnTitle: 'SSN', columnName: 'ssn' }], limit: 10 } },
        // full reads every category and key, but with property-key rights on the source it is not the whole graph.
        expected: onFraud(columnsRefused, noRawRead('an alert preview'), columnsRefused),
      },
      { call: { method: 'POST', url: '/api/other/graph/alertPreview', body: { query: 'RETURN 1 AS one' } }, expected: onOther() },
    ];
  },
  'GET /api/:sourceKey/graph/nodes/:id': ({ ids }) => [
    { call: { method: 'GET', url: `/api/fraud/graph/nodes/${encodeURIComponent(ids.alice)}` }, expected: onFraud({ status: 200, from: (admin) => asPerson(admin.body) }, unknown('node', ids.alice)) },
    { call: { method: 'GET', url: `/api/fraud/graph/nodes/${encodeURIComponent(ids.acme)}` }, expected: onFraud(unknown('node', ids.acme), unknown('node', ids.acme)) },
    { call: { method: 'GET', url: '/api/fraud/graph/nodes/Person:nobody' }, expected: onFraud(unknown('node', 'Person:nobody'), unknown('node', 'Person:nobody')) },
    { call: { method: 'GET', url: '/api/other/graph/nodes/x' }, expected: onOther() },
  ],
  'POST /api/:sourceKey/graph/nodes/:id': ({ ids }) => [
    { call: { method: 'POST', url: `/api/fraud/graph/nodes/${encodeURIComponent(ids.bob)}`, body: {} }, expected: onFraud({ status: 200, from: (admin) => ({ nodes: admin.body.nodes.map(asPerson), edges: [] }) }, unknown('node', ids.bob)) },
    { call: { method: 'POST', url: `/api/fraud/graph/nodes/${encodeURIComponent(ids.acme)}`, body: {} }, expected: onFraud(unknown('node', ids.acme), unknown('node', ids.acme)) },
    { call: { method: 'POST', url: '/api/other/graph/nodes/x', body: {} }, expected: onOther() },
  ],
  'GET /api/:sourceKey/graph/edges/:id': ({ ids }) => [
    { call: { method: 'GET', url: `/api/fraud/graph/edges/${encodeURIComponent(ids.knows)}` }, expected: onFraud({ status: 200, from: (admin) => asPerson(admin.body) }, unknown('edge', ids.knows)) },
    // WORKS_AT is a type person reads, but its end is a Company: as if there were no such edge.
    { call: { method: 'GET', url: `/api/fraud/graph/edges/${encodeURIComponent(ids.aliceWorks)}` }, expected: onFraud(unknown('edge', ids.aliceWorks), unknown('edge', ids.aliceWorks)) },
    { call: { method: 'GET', url: '/api/other/graph/edges/x' }, expected: onOther() },
  ],
  'POST /api/:sourceKey/graph/edges/:id': ({ ids }) => [
    {
      call: { method: 'POST', url: `/api/fraud/graph/edges/${encodeURIComponent(ids.knows)}`, body: {} },
      expected: onFraud({ status: 200, from: (admin) => ({ nodes: admin.body.nodes.map(asPerson), edges: admin.body.edges.map(asPerson) }) }, unknown('edge', ids.knows)),
    },
    { call: { method: 'POST', url: `/api/fraud/graph/edges/${encodeURIComponent(ids.bobWorks)}`, body: {} }, expected: onFraud(unknown('edge', ids.bobWorks), unknown('edge', ids.bobWorks)) },
    { call: { method: 'POST', url: '/api/other/graph/edges/x', body: {} }, expected: onOther() },
  ],
};

describe('every source-scoped route × groups with different rights × session and API key: allowed, filtered or not there', () => {
  let t: TestService;
  const world = {} as World;
  const callers = new Map<string, ApiClient>();

  beforeAll(async () => {
    t = await startTestService();
    const admin = t.admin;
    expect((await admin.post('/api/admin/sources', { key: 'fraud', name: 'Fraud', graph: { vendor: 'embedded' } })).status).toBe(201);
    await createSource(admin, 'other');
    for (const query of [
      'CREATE NODE TABLE Person(id STRING, name STRING, ssn STRING, PRIMARY KEY(id))',
      'CREATE NODE TABLE Company(id STRING, name STRING, PRIMARY KEY(id))',
      'CREATE REL TABLE KNOWS(FROM Person TO Person, since INT64, note STRING)',
      'CREATE REL TABLE WORKS_AT(FROM Person TO Company, role STRING)',
      "CREATE (:Person {id: 'alice', name: 'Alice', ssn: '111'}), (:Person {id: 'bob', name: 'Bob', ssn: '222'}), (:Company {id: 'acme', name: 'Acme'})",
      "MATCH (a:Person {id: 'alice'}), (b:Person {id: 'bob'}) CREATE (a)-[:KNOWS {since: 2020, note: 'met at Acme'}]->(b)",
      "MATCH (p:Person), (c:Company {id: 'acme'}) CREATE (p)-[:WORKS_AT {role: p.name + ' works'}]->(c)",
    ]) {
      const answer = await admin.post('/api/fraud/graph/run/query', { query });
      expect(answer.status, `${query}: ${JSON.stringify(answer.body)}`).toBe(200);
    }
    const all = (await admin.post('/api/fraud/graph/run/query', { query: 'MATCH (a)-[r]->(b) RETURN a, r, b' })).body;
    const node = (id: string) => all.nodes.find((n: Json) => n.data.properties.id === id).id as string;
    const edge = (type: string, from: string) => all.edges.find((e: Json) => e.data.type === type && e.data.source === node(from)).id as string;
    world.ids = { alice: node('alice'), bob: node('bob'), acme: node('acme'), knows: edge('KNOWS', 'alice'), aliceWorks: edge('WORKS_AT', 'alice'), bobWorks: edge('WORKS_AT', 'bob') };
    const { ids } = world;

    const a = await createAlert(admin, 'fraud', { title: 'A' });
    const b = await createAlert(admin, 'fraud', { title: 'B' });
    const c = await createAlert(admin, 'other', { title: 'C' });
    world.alerts = { a: a.id, b: b.id, c: c.id };
    const [caseA] = await reportMatches(admin, 'fraud', a.id, [{ nodes: [ids.alice, ids.acme], edges: [ids.aliceWorks] }]);
    const [caseB] = await reportMatches(admin, 'fraud', b.id, [{ nodes: [ids.alice, ids.bob, ids.acme], edges: [ids.knows, ids.aliceWorks] }]);
    const [caseC] = await reportMatches(admin, 'other', c.id, [{ nodes: ['n1'] }]);
    world.cases = { a: caseA!.id, b: caseB!.id, c: caseC!.id };

    // The rights, straight into the database (the groups API is another file's).
    await t.db.query("UPDATE data_sources SET property_key_access_rights = true WHERE key = 'fraud'");
    const group = async (name: string, sourceKey: string, rights: [string, string, string, string?][]) => {
      const { rows } = await t.db.query<{ id: number }>('INSERT INTO groups (name, builtin, source_key) VALUES ($1, false, $2) RETURNING id', [name, sourceKey]);
      for (const [targetType, targetName, type, itemType] of rights) {
        await t.db.query('INSERT INTO group_access_rights (group_id, target_type, target_item_type, target_name, type) VALUES ($1, $2, $3, $4, $5)', [rows[0]!.id, targetType, itemType ?? '', targetName, type]);
      }
      return rows[0]!.id;
    };
    const groups: Record<Profile, number> = {
      full: await group('Full', 'fraud', [
        ['nodeCategory', '*', 'read'],
        ['edgeType', '*', 'read'],
        ['nodePropertyKey', '*', 'read', '*'],
        ['edgePropertyKey', '*', 'read', '*'],
        ['action', 'rawReadQuery', 'do'],
        ['alert', String(a.id), 'read'],
      ]),
      person: await group('Persons', 'fraud', [
        ['nodeCategory', 'Person', 'read'],
        ['edgeType', 'KNOWS', 'read'],
        ['edgeType', 'WORKS_AT', 'read'],
        ['nodePropertyKey', 'id', 'read', 'Person'],
        ['nodePropertyKey', 'name', 'read', 'Person'],
        ['edgePropertyKey', 'since', 'read', 'KNOWS'],
        ['action', 'rawReadQuery', 'do'],
        ['alert', String(b.id), 'read'],
      ]),
      none: await group('Nothing', 'fraud', []),
      other: await group('Other team', 'other', [
        ['nodeCategory', '*', 'read'],
        ['edgeType', '*', 'read'],
        ['action', 'rawReadQuery', 'do'],
        ['alert', '*', 'read'],
      ]),
      analyst: 2,
    };
    world.groups = groups;

    // One user per group and one API key per user, its application in the same group.
    for (const profile of PROFILES) {
      const password = `${profile}-password`;
      const email = `${profile}@example.com`;
      const user = await admin.post('/api/admin/users', { username: profile, email, password, groups: [2] });
      expect(user.status, JSON.stringify(user.body)).toBe(201);
      const application = await admin.post('/api/admin/applications', { name: `${profile} sync`, groups: [2] });
      expect(application.status, JSON.stringify(application.body)).toBe(201);
      if (profile !== 'analyst') {
        await t.db.query('DELETE FROM user_groups WHERE user_id = $1', [user.body.id]);
        await t.db.query('INSERT INTO user_groups (user_id, group_id) VALUES ($1, $2)', [user.body.id, groups[profile]]);
        await t.db.query('DELETE FROM application_groups WHERE application_id = $1', [application.body.id]);
        await t.db.query('INSERT INTO application_groups (application_id, group_id) VALUES ($1, $2)', [application.body.id, groups[profile]]);
      }
      callers.set(`${profile} session`, await signIn(t.app, profile, password));
      callers.set(`${profile} API key`, new ApiClient(t.app, { authorization: `Basic ${Buffer.from(`${email}:${application.body.apiKey}`).toString('base64')}` }));
    }
  });
  afterAll(async () => t?.close());

  it('has a row for every source-scoped user route the service declares, and none for a route it does not', () => {
    const declared = new Set(
      t.app.declaredRoutes.filter((r) => r.access === 'user' && r.url.startsWith('/api/:sourceKey/') && r.method !== 'HEAD').map((r) => `${r.method} ${r.url}`),
    );
    const missing = [...declared].filter((route) => !(route in ROUTES));
    // As lines: every route missing is named in the failure.
    expect(missing.join('\n'), 'source-scoped user routes without a row in ROUTES: add one, with what each group may get').toBe('');
    expect(Object.keys(ROUTES).filter((route) => !declared.has(route)).join('\n'), 'rows of ROUTES for routes the service does not declare').toBe('');
    // Each GET's HEAD twin is declared beside it, and is checked with its row.
    const heads = t.app.declaredRoutes.filter((r) => r.method === 'HEAD' && r.url.startsWith('/api/:sourceKey/')).map((r) => `GET ${r.url}`);
    expect(heads.every((route) => declared.has(route))).toBe(true);
  });

  it('answers a source nobody may see, and an alert nobody may read, as the Admin is answered for ones that do not exist', async () => {
    expect(await t.admin.get('/api/nosuch/alerts')).toMatchObject(unknownSource('nosuch'));
    expect(await t.admin.post('/api/nosuch/graph/run/query', { query: 'RETURN 1' })).toMatchObject(unknownSource('nosuch'));
    expect(await t.admin.get('/api/fraud/alerts/999999')).toMatchObject(unknown('alert', 999999));
    expect(await t.admin.get('/api/fraud/graph/nodes/Person:nobody')).toMatchObject(unknown('node', 'Person:nobody'));
  });

  for (const [route, casesOf] of Object.entries(ROUTES)) {
    describe(route, () => {
      for (const profile of PROFILES) {
        for (const via of ['session', 'API key']) {
          it(`${profile} (${via})`, async () => {
            const caller = callers.get(`${profile} ${via}`)!;
            for (const { call, expected, changes } of casesOf(world)) {
              const outcome = expected[profile];
              const what = `${call.method} ${call.url} as ${profile} (${via})`;
              const reference = changes ? undefined : await t.admin.request(call.method, call.url, call.body);
              const answer = await caller.request(call.method, call.url, call.body);
              if (outcome === 'asAdmin') {
                expect(answer.status, what).toBe(reference!.status);
                expect(comparable(answer.body), what).toEqual(comparable(reference!.body));
              } else {
                expect(answer.status, `${what}: ${JSON.stringify(answer.body).slice(0, 300)}`).toBe(outcome.status);
                if (outcome.body !== undefined || outcome.from) {
                  const body = outcome.from ? outcome.from(reference!) : outcome.body;
                  expect(comparable(answer.body), what).toEqual(comparable(body));
                }
              }
              // A GET's HEAD twin answers the same status, and no body.
              if (call.method === 'GET') {
                const head = await caller.request('HEAD', call.url);
                expect(head.status, `HEAD ${call.url} as ${profile} (${via})`).toBe(answer.status);
                expect(head.body, `HEAD ${call.url}`).toBe('');
              }
            }
          });
        }
      }
    });
  }

  it('leaves out of the case page what a group may not read, the same whether the page came from the cache or not', async () => {
    const { alerts, cases } = world;
    const page = `/api/fraud/alerts/${alerts.b}/cases/${cases.b}?graphLimit=2`;
    // The Admin's request fills the cache with the page whole (the target's ids are sorted: acme, then alice); person's
    // answer is filtered from it.
    const whole = (await t.admin.get(page)).body;
    expect(whole.graph.nodes.map((n: Json) => n.id)).toEqual([world.ids.acme, world.ids.alice]);
    expect(whole.truncatedByAccess).toBe(false);
    const filtered = (await callers.get('person session')!.get(page)).body;
    expect(filtered.graph).toEqual({ nodes: [asPerson(whole.graph.nodes[1])], edges: [] });
    expect(filtered.truncatedByAccess).toBe(true);
    // The cached page is untouched by the filter: the Admin still gets alice's ssn.
    expect((await t.admin.get(page)).body.graph.nodes[1].data.properties).toMatchObject({ id: 'alice', ssn: '111' });
  });
});

/**
 * Answers compared without what differs between two reads of the same items: their order (a query's rows come in the
 * engine's order) and each item's `readAt` (when it was read).
 */
function comparable(body: Json): Json {
  const items = (list: unknown) => Array.isArray(list) && list.every((item) => typeof item === 'object' && item !== null);
  const unread = (value: Json): Json => {
    if (Array.isArray(value)) return value.map(unread);
    if (!value || typeof value !== 'object') return value;
    return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, key === 'readAt' ? 'read' : unread(inner)]));
  };
  const sorted = body && typeof body === 'object' && items(body.nodes) && items(body.edges) ? sortedItems(body) : body;
  return unread(sorted);
}
