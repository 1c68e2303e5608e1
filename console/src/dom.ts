/** A child of `h`: nodes and text; null, undefined and false are left out. */
export type Child = Node | string | null | undefined | false;

/** Attributes of `h`: strings set attributes, true sets an empty one, on* functions listen. */
export type Props = Record<string, string | boolean | undefined | ((event: Event) => void)>;

/** Creates an element with attributes, listeners and children. */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props: Props = {},
  ...children: (Child | Child[])[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (typeof value === "function") el.addEventListener(key.slice(2).toLowerCase(), value);
    else if (value === true) el.setAttribute(key, "");
    else if (typeof value === "string") el.setAttribute(key, value);
  }
  append(el, children);
  return el;
}

/** Appends children (flattened) to `el`. */
export function append(el: Element, children: (Child | Child[])[]): void {
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child);
  }
}

/** Replaces the children of `el`. */
export function replace(el: Element, ...children: (Child | Child[])[]): void {
  el.replaceChildren();
  append(el, children);
}

let ids = 0;
/** A document-unique id for labels and aria references. */
export function uid(prefix: string): string {
  ids += 1;
  return `${prefix}-${ids}`;
}

/** Resolves after `ms`, or at once when `signal` aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    }
    signal?.addEventListener("abort", done, { once: true });
  });
}
