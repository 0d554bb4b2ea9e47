// Small DOM helpers shared by the page's modules.

/** The element with this data-testid. */
export const $ = (id) => document.querySelector(`[data-testid="${id}"]`);

/** Make an element: props (class, testid, on<event>, attributes) and children. */
export const el = (tag, props = {}, ...children) => {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(props)) {
    if (k === 'class') node.className = v;
    else if (k === 'testid') node.dataset.testid = v;
    else if (k.startsWith('on')) node.addEventListener(k.slice(2), v);
    else if (v !== undefined && v !== null && v !== false) node.setAttribute(k, v === true ? '' : v);
  }
  for (const c of children) if (c !== null && c !== undefined && c !== false) node.append(c);
  return node;
};
