import { Fragment } from 'preact';
import { useEffect, useMemo, useState } from 'preact/hooks';
import { get, messageOf } from '../api';
import { lazyComponent } from '../components/lazy';
import { Notice } from '../components/notice';
import { formatValue } from '../format';
import type { GraphEdge, GraphNode, PopulatedCase } from '../types';
import { captionOf } from './captions';

// Cytoscape is most of the console's weight: fetched with the first case page that has a graph to draw.
const CaseGraph = lazyComponent(() => import('./case-graph').then((m) => m.default), 'graph drawing');

/** How many ids of a target to list before "and n more": a target may hold 10,000. */
const SHOWN_IDS = 200;

/** The pages drawn after the first, which came with the case. */
interface MorePages {
  nodes: GraphNode[];
  edges: GraphEdge[];
  nextOffset: number | null;
}

/**
 * The case's target: drawn as a graph when the data source's graph answered, with a panel of the selected item's
 * properties; else its ids, and why there is no drawing. A large target is drawn a page at a time (the API's
 * `graphOffset`): the first comes with the case, "Draw more" adds the next. `base`: the case's API path.
 */
export function CaseTarget({ kase, base }: { kase: PopulatedCase; base: string }) {
  const [selected, setSelected] = useState<string>();
  const [more, setMore] = useState<MorePages>();
  const [drawing, setDrawing] = useState<{ busy: boolean; error?: string }>({ busy: false });
  // The case loaded again (its status changed): its first page is new, the pages added to it go.
  useEffect(() => setMore(undefined), [kase]);
  const first = kase.graph;
  // The same arrays until a page is added: the drawing is laid out again only then.
  const graph = useMemo(() => (first ? { nodes: [...first.nodes, ...(more?.nodes ?? [])], edges: [...first.edges, ...(more?.edges ?? [])] } : undefined), [first, more]);
  const page = kase.graphPage;
  const nextOffset = more ? more.nextOffset : (page?.nextOffset ?? null);
  const drawMore = async () => {
    if (nextOffset === null || !page) return;
    setDrawing({ busy: true });
    try {
      const next = await get<PopulatedCase>(`${base}?graphOffset=${nextOffset}&graphLimit=${page.limit}`);
      if (!next.graph) throw new Error(next.graphProblem ? `${next.graphProblem.message} (${next.graphProblem.key})` : 'the graph did not answer');
      setMore({ nodes: [...(more?.nodes ?? []), ...next.graph.nodes], edges: [...(more?.edges ?? []), ...next.graph.edges], nextOffset: next.graphPage?.nextOffset ?? null });
      setDrawing({ busy: false });
    } catch (err) {
      setDrawing({ busy: false, error: messageOf(err) });
    }
  };
  const item = graph ? (graph.nodes.find((n) => n.id === selected) ?? graph.edges.find((e) => e.id === selected)) : undefined;
  return (
    <section aria-labelledby="target" class="card">
      <h2 id="target">Target</h2>
      {graph ? (
        <div class="case-drawing">
          <CaseGraph nodes={graph.nodes} edges={graph.edges} selected={selected} onSelect={setSelected} />
          <ItemPanel item={item} />
        </div>
      ) : null}
      {graph && page && page.total > page.limit ? (
        <p class="drawn-count">
          <span class="muted">
            Drawn: the first {Math.min(page.total, nextOffset ?? page.total).toLocaleString('en')} of the target's {page.total.toLocaleString('en')} nodes and edges.{' '}
          </span>
          {nextOffset !== null ? (
            <button type="button" class="secondary" disabled={drawing.busy} onClick={() => void drawMore()}>
              {drawing.busy ? 'Drawing…' : `Draw ${Math.min(page.limit, page.total - nextOffset).toLocaleString('en')} more`}
            </button>
          ) : null}
        </p>
      ) : null}
      {drawing.error ? <Notice kind="error">The next page could not be drawn: {drawing.error}</Notice> : null}
      {graph ? null : kase.graphProblem ? (
        <Notice kind="error">
          The graph could not be drawn: {kase.graphProblem.message} ({kase.graphProblem.key}). The target's ids are below.
        </Notice>
      ) : (
        <p class="muted">This data source has no graph to draw the target from: its matches were reported through the API. The target's ids are below.</p>
      )}
      <div class="columns">
        <Ids label="Nodes" ids={kase.nodes} captions={graph ? new Map(graph.nodes.map((n) => [n.id, captionOf(n).replace('\n', ' ')])) : undefined} selected={selected} onSelect={graph ? setSelected : undefined} />
        <Ids label="Edges" ids={kase.edges} captions={graph ? new Map(graph.edges.map((e) => [e.id, e.data.type])) : undefined} selected={selected} onSelect={graph ? setSelected : undefined} />
      </div>
    </section>
  );
}

/** The selected node's or edge's categories or type, and its properties. */
function ItemPanel({ item }: { item: GraphNode | GraphEdge | undefined }) {
  if (!item) return <aside class="case-panel muted" aria-label="Selected item">Select a node or an edge, in the drawing or in the lists below, to see its properties.</aside>;
  const properties = Object.entries(item.data.properties);
  return (
    <aside class="case-panel" aria-label="Selected item">
      <h3>{'categories' in item.data ? `Node ${item.data.categories.join(', ')}` : `Edge ${item.data.type}`}</h3>
      <p>
        <code>{item.id}</code>
      </p>
      {'source' in item ? (
        <p class="muted">
          from <code>{item.source}</code> to <code>{item.target}</code>
        </p>
      ) : null}
      {properties.length === 0 ? (
        <p class="muted">No properties.</p>
      ) : (
        <dl class="facts">
          {properties.map(([name, value]) => (
            <Fragment key={name}>
              <dt>{name}</dt>
              <dd>{formatValue(value)}</dd>
            </Fragment>
          ))}
        </dl>
      )}
    </aside>
  );
}

function Ids({ label, ids, captions, selected, onSelect }: { label: string; ids: string[]; captions: Map<string, string> | undefined; selected: string | undefined; onSelect: ((id: string) => void) | undefined }) {
  return (
    <div class="ids">
      <h3>
        {label} ({ids.length})
      </h3>
      {ids.length === 0 ? (
        <p class="muted">none</p>
      ) : (
        <ul aria-label={label}>
          {ids.slice(0, SHOWN_IDS).map((id) => (
            <li key={id}>
              {onSelect ? (
                <button type="button" class={`chip-button${id === selected ? ' selected' : ''}`} aria-pressed={id === selected} onClick={() => onSelect(id)} title={captions?.get(id)}>
                  <code>{id}</code>
                </button>
              ) : (
                <code>{id}</code>
              )}
            </li>
          ))}
          {ids.length > SHOWN_IDS ? <li class="muted">and {ids.length - SHOWN_IDS} more</li> : null}
        </ul>
      )}
    </div>
  );
}
