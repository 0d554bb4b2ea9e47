// Editor decorations the page sets as a whole (highlights, co-authors' carets).
import { StateField } from '@codemirror/state';
import { EditorView, Decoration } from '@codemirror/view';

/** A field of decorations: moved along by edits, replaced as a whole by `effect`. */
export function decorationField(effect) {
  return StateField.define({
    create: () => Decoration.none,
    update(value, tr) {
      value = value.map(tr.changes);
      for (const e of tr.effects) if (e.is(effect)) value = e.value;
      return value;
    },
    provide: (field) => EditorView.decorations.from(field),
  });
}
