import cytoscape, { type Core, type ElementDefinition } from 'cytoscape';
import { useEffect, useRef } from 'preact/hooks';
import type { GraphEdge, GraphNode } from '../types';
import { captionOf } from './captions';

// One colour per category, from a fixed palette (the same category has the same colour on every page).
const PALETTE = ['#2459c9', '#1e7a3c', '#b3261e', '#8a5a00', '#6b3fa0', '#00738a', '#a3366b', '#4a5568'];
function colourOf(category: string | undefined): string {
  if (!category) return PALETTE[PALETTE.length - 1]!;
  let hash = 0;
  for (const ch of category) hash = (hash * 31 + ch.charCodeAt(0)) >>> 0;
  return PALETTE[hash % PALETTE.length]!;
}

function elementsOf(nodes: GraphNode[], edges: GraphEdge[]): ElementDefinition[] {
  const ids = new Set(nodes.map((n) => n.id));
  const elements: ElementDefinition[] = nodes.map((n) => ({ group: 'nodes', data: { id: n.id, caption: captionOf(n), colour: colourOf(n.data.categories[0]) } }));
  // An edge's end outside the target is drawn as its id alone, so the edge has somewhere to go.
  for (const end of edges.flatMap((e) => [e.source, e.target])) {
    if (ids.has(end)) continue;
    ids.add(end);
    elements.push({ group: 'nodes', data: { id: end, caption: end, colour: '#c9d0da' }, classes: 'outside' });
  }
  for (const e of edges) elements.push({ group: 'edges', data: { id: e.id, source: e.source, target: e.target, caption: e.data.type } });
  return elements;
}

interface CaseGraphProps {
  nodes: GraphNode[];
  edges: GraphEdge[];
  /** The id of the item shown in the panel, selected in the drawing too. */
  selected: string | undefined;
  onSelect: (id: string | undefined) => void;
}

/**
 * The case's target drawn with Cytoscape.js: nodes captioned with their categories and key property, edges with
 * their type; a click selects an item for the panel beside it. The drawing's element counts are on the figure
 * (`data-nodes`, `data-edges`), read from Cytoscape itself once it has laid them out.
 */
export default function CaseGraph({ nodes, edges, selected, onSelect }: CaseGraphProps) {
  const host = useRef<HTMLDivElement>(null);
  const cy = useRef<Core | undefined>(undefined);
  const onSelectNow = useRef(onSelect);
  onSelectNow.current = onSelect;

  useEffect(() => {
    const container = host.current!;
    const graph = cytoscape({
      container,
      elements: elementsOf(nodes, edges),
      minZoom: 0.2,
      maxZoom: 3,
      style: [
        {
          selector: 'node',
          style: {
            'background-color': 'data(colour)',
            label: 'data(caption)',
            'text-wrap': 'wrap',
            'text-valign': 'bottom',
            'text-margin-y': 4,
            'font-size': 11,
            'font-family': 'system-ui, sans-serif',
            color: '#1d2430',
            width: 26,
            height: 26,
          },
        },
        { selector: 'node.outside', style: { 'border-width': 1, 'border-color': '#8a94a6', 'border-style': 'dashed', color: '#5d6878' } },
        {
          selector: 'edge',
          style: {
            label: 'data(caption)',
            'font-size': 10,
            color: '#5d6878',
            'text-rotation': 'autorotate',
            'text-background-color': '#fff',
            'text-background-opacity': 0.85,
            'text-background-padding': '2',
            width: 2,
            'line-color': '#9aa5b5',
            'target-arrow-color': '#9aa5b5',
            'target-arrow-shape': 'triangle',
            'curve-style': 'bezier',
          },
        },
        { selector: ':selected', style: { 'border-width': 3, 'border-color': '#f5a524', 'line-color': '#f5a524', 'target-arrow-color': '#f5a524' } },
      ],
      layout: { name: nodes.length > 1 ? 'cose' : 'grid', animate: false, padding: 30, randomize: false, nodeDimensionsIncludeLabels: true },
    });
    graph.on('select', 'node, edge', (event) => onSelectNow.current(event.target.id()));
    graph.on('tap', (event) => {
      if (event.target === graph) onSelectNow.current(undefined);
    });
    container.dataset.nodes = String(graph.nodes().length);
    container.dataset.edges = String(graph.edges().length);
    cy.current = graph;
    return () => graph.destroy();
  }, [nodes, edges]);

  useEffect(() => {
    const graph = cy.current;
    if (!graph) return;
    graph.elements(':selected').filter((el) => el.id() !== selected).unselect();
    if (selected) graph.getElementById(selected).select();
  }, [selected]);

  return (
    <figure class="case-graph">
      <div ref={host} class="case-graph-canvas" role="img" aria-label={`The case drawn: ${nodes.length} nodes and ${edges.length} edges; the lists below name each one`} />
    </figure>
  );
}
