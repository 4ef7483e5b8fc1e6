import { Widget } from '@lumino/widgets';
import { act } from 'react';

(globalThis as any).IS_REACT_ACT_ENVIRONMENT = true;

/** Render a (React) widget now and let React commit. */
export async function render(widget: Widget): Promise<void> {
  await act(async () => {
    widget.update();
    await new Promise(resolve => requestAnimationFrame(() => resolve(null)));
  });
}

/** Set an input's value the way typing does (React sees it). */
export function setValue(
  input: HTMLInputElement | HTMLTextAreaElement,
  value: string
): void {
  const proto = Object.getPrototypeOf(input);
  Object.getOwnPropertyDescriptor(proto, 'value')!.set!.call(input, value);
  input.dispatchEvent(new Event('input', { bubbles: true }));
}

export { act };
