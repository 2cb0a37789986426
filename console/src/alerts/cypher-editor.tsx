import { defaultKeymap, history, historyKeymap } from '@codemirror/commands';
import { bracketMatching, defaultHighlightStyle, StreamLanguage, syntaxHighlighting } from '@codemirror/language';
import { cypher } from '@codemirror/legacy-modes/mode/cypher';
import { Compartment, EditorState } from '@codemirror/state';
import { drawSelection, EditorView, highlightActiveLine, keymap, lineNumbers, placeholder } from '@codemirror/view';
import { useEffect, useLayoutEffect, useRef } from 'preact/hooks';

const cypherLanguage = StreamLanguage.define(cypher);

// What the page's stylesheet cannot reach inside the editor's shadow root.
const theme = EditorView.theme({
  '&': { minHeight: '5.5rem', maxHeight: '22rem', fontSize: '0.9rem' },
  '&.cm-focused': { outline: '3px solid #7aa2f7', outlineOffset: '2px' },
  '.cm-scroller': { fontFamily: "ui-monospace, SFMono-Regular, Menlo, Consolas, 'Liberation Mono', monospace" },
});

interface CypherEditorProps {
  value: string;
  onChange: (value: string) => void;
  /** The editor's name, as its visible label says it. */
  label: string;
  /** The error about the query, read with it by a screen reader. */
  error?: string | undefined;
}

/**
 * A Cypher query in CodeMirror 6 with Cypher highlighting. Tab is left to move the focus on (no tab indentation), so a
 * keyboard user is never trapped in it.
 *
 * It lives in a shadow root: CodeMirror styles itself with a <style> element in a document, which the console's
 * Content-Security-Policy (style-src 'self') refuses, and with a constructed style sheet in a shadow root, which it
 * allows. An id reference does not cross into it, so the name and the error are given as text.
 */
export function CypherEditor({ value, onChange, label, error }: CypherEditorProps) {
  const host = useRef<HTMLDivElement>(null);
  const view = useRef<EditorView | undefined>(undefined);
  const onChangeNow = useRef(onChange);
  onChangeNow.current = onChange;
  const attributes = useRef(new Compartment());

  const contentAttributes = () =>
    EditorView.contentAttributes.of({
      'aria-label': label,
      ...(error ? { 'aria-invalid': 'true', 'aria-description': error } : {}),
      spellcheck: 'false',
    });

  useEffect(() => {
    const shadow = host.current!.attachShadow({ mode: 'open' });
    const editor = new EditorView({
      root: shadow,
      parent: shadow,
      state: EditorState.create({
        doc: value,
        extensions: [
          lineNumbers(),
          history(),
          drawSelection(),
          highlightActiveLine(),
          bracketMatching(),
          cypherLanguage,
          syntaxHighlighting(defaultHighlightStyle),
          keymap.of([...defaultKeymap, ...historyKeymap]),
          placeholder('MATCH (a)-[r]->(b) RETURN a, r, b'),
          EditorView.lineWrapping,
          theme,
          attributes.current.of(contentAttributes()),
          EditorView.updateListener.of((update) => {
            if (update.docChanged) onChangeNow.current(update.state.doc.toString());
          }),
        ],
      }),
    });
    view.current = editor;
    return () => editor.destroy();
  }, []);

  // A value set from outside (the alert loaded, a query reset) replaces the text; typing comes back equal.
  useEffect(() => {
    const editor = view.current;
    if (editor && editor.state.doc.toString() !== value) editor.dispatch({ changes: { from: 0, to: editor.state.doc.length, insert: value } });
  }, [value]);

  // In the same commit as the error's text beside the editor, so the two are never seen apart.
  useLayoutEffect(() => {
    view.current?.dispatch({ effects: attributes.current.reconfigure(contentAttributes()) });
  }, [label, error]);

  return <div ref={host} class={`code-editor${error ? ' has-error' : ''}`} onClick={() => view.current?.focus()} />;
}
