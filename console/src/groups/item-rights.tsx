import { useId } from 'preact/hooks';
import { ITEM_LEVELS, type ItemLevel } from '../types';
import type { ItemRow, PropertyLevel, PropertyRow } from './rights-model';

const LEVEL_WORDS: Record<ItemLevel, string> = { none: 'none', read: 'read', edit: 'edit', write: 'write' };
const PROPERTY_LEVELS = ITEM_LEVELS.filter((l): l is PropertyLevel => l !== 'write');

function LevelSelect<L extends ItemLevel>({ label, value, levels, onChange }: { label: string; value: L; levels: readonly L[]; onChange: (level: L) => void }) {
  return (
    <select aria-label={label} value={value} onChange={(e) => onChange(e.currentTarget.value as L)}>
      {levels.map((l) => (
        <option key={l} value={l}>
          {LEVEL_WORDS[l]}
        </option>
      ))}
    </select>
  );
}

/**
 * Node categories (or edge types): the level of every one (`*`), then the ones named apart from it, each with its
 * own level, which wins over `*` for it. `noun`: "node category" or "edge type".
 */
export function ItemRights({
  title,
  noun,
  anyLevel,
  rows,
  onAnyLevel,
  onRows,
}: {
  title: string;
  noun: string;
  anyLevel: ItemLevel;
  rows: ItemRow[];
  onAnyLevel: (level: ItemLevel) => void;
  onRows: (rows: ItemRow[]) => void;
}) {
  const hint = useId();
  const change = (i: number, row: Partial<ItemRow>) => onRows(rows.map((r, j) => (j === i ? { ...r, ...row } : r)));
  return (
    <fieldset class="rights" aria-describedby={hint}>
      <legend>{title}</legend>
      <p class="hint" id={hint}>
        {capitalise(article(noun))} {noun} named here has its own level; every other one has the level of “every {noun}”. Read is what this service enforces (answers leave out
        what a group may not read); edit and write are kept for LKE’s client.
      </p>
      <table class="rights-table">
        <tbody>
          <tr>
            <th scope="row">Every {noun} (*)</th>
            <td>
              <LevelSelect label={`Level of every ${noun}`} value={anyLevel} levels={ITEM_LEVELS} onChange={onAnyLevel} />
            </td>
            <td />
          </tr>
          {rows.map((row, i) => (
            <tr key={i}>
              <th scope="row">
                <input aria-label={`${capitalise(noun)} ${i + 1}`} value={row.name} spellcheck={false} onInput={(e) => change(i, { name: e.currentTarget.value })} />
              </th>
              <td>
                <LevelSelect label={`Level of ${noun} ${i + 1}`} value={row.level} levels={ITEM_LEVELS} onChange={(level) => change(i, { level })} />
              </td>
              <td>
                <button type="button" class="secondary small" aria-label={`Remove ${noun} ${i + 1}`} onClick={() => onRows(rows.filter((_, j) => j !== i))}>
                  Remove
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <button type="button" class="secondary small" onClick={() => onRows([...rows, { name: '', level: 'read' }])}>
        Add {article(noun)} {noun}
      </button>
    </fieldset>
  );
}

/** Property keys of nodes (or edges): a level per (category or type, key); `*` stands for any of either. */
export function PropertyRights({ title, noun, itemNoun, rows, onRows }: { title: string; noun: string; itemNoun: string; rows: PropertyRow[]; onRows: (rows: PropertyRow[]) => void }) {
  const change = (i: number, row: Partial<PropertyRow>) => onRows(rows.map((r, j) => (j === i ? { ...r, ...row } : r)));
  const prefix = capitalise(noun);
  return (
    <fieldset class="rights">
      <legend>{title}</legend>
      {rows.length === 0 ? <p class="muted">No key named: while property-key rights are on, none of their properties is readable.</p> : null}
      <table class="rights-table">
        <tbody>
          {rows.map((row, i) => (
            <tr key={i}>
              <td>
                <input aria-label={`${prefix} ${i + 1}: ${itemNoun}`} placeholder={`${itemNoun} or *`} value={row.itemType} spellcheck={false} onInput={(e) => change(i, { itemType: e.currentTarget.value })} />
              </td>
              <td>
                <input aria-label={`${prefix} ${i + 1}: key`} placeholder="key or *" value={row.key} spellcheck={false} onInput={(e) => change(i, { key: e.currentTarget.value })} />
              </td>
              <td>
                <LevelSelect label={`${prefix} ${i + 1}: level`} value={row.level} levels={PROPERTY_LEVELS} onChange={(level) => change(i, { level })} />
              </td>
              <td>
                <button type="button" class="secondary small" aria-label={`Remove ${noun} ${i + 1}`} onClick={() => onRows(rows.filter((_, j) => j !== i))}>
                  Remove
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <button type="button" class="secondary small" onClick={() => onRows([...rows, { itemType: '*', key: '', level: 'read' }])}>
        Add {article(noun)} {noun}
      </button>
    </fieldset>
  );
}

const capitalise = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);
/** "an edge type", "a node category": the nouns here start with their sound's letter. */
const article = (noun: string) => (/^[aeiou]/.test(noun) ? 'an' : 'a');
