import { Signal } from '@lumino/signaling';
import { Widget } from '@lumino/widgets';

import { ClusterClient } from '../api';
import { SessionsModel } from '../sessions';
import {
  addStatusItem,
  ClusterStatusItem,
  contextOf,
  STATUS_ITEM_ID,
  statusText
} from '../statusbar';
import { session } from './fixtures';

/** A notebook-like shell widget with the parts of a session context used. */
class FakeNotebook extends Widget {
  kernelId: string | null = null;
  readonly sessionContext = {
    kernelChanged: new Signal<unknown, void>(this),
    session: null as any
  };
  switchTo(id: string | null): void {
    this.kernelId = id;
    this.sessionContext.session = id ? { kernel: { id } } : null;
    this.sessionContext.kernelChanged.emit();
  }
}

describe('the status-bar item', () => {
  let model: SessionsModel;
  let revealed: string[];

  beforeEach(() => {
    model = new SessionsModel({ client: {} as unknown as ClusterClient });
    revealed = [];
  });

  afterEach(() => model.dispose());

  it('says the session, its real shape and status', () => {
    const s = session({ name: 'demo', status: 'RUNNING' });
    expect(statusText(s)).toBe('Cluster demo: 3 × 0.5 CPU, 512m · RUNNING');
  });

  it('knows which widgets have a kernel', () => {
    expect(contextOf(null)).toBeNull();
    expect(contextOf(new Widget())).toBeNull();
    const notebook = new FakeNotebook();
    expect(contextOf(notebook)).toBe(notebook.sessionContext);
  });

  it('follows the current widget, its kernel and the sessions', () => {
    const shell = {
      currentWidget: null as Widget | null,
      currentChanged: new Signal<unknown, unknown>({})
    };
    const registered: any[] = [];
    const statusBar = {
      registerStatusItem: (id: string, options: any) => {
        registered.push([id, options]);
        return { dispose: () => undefined, isDisposed: false };
      }
    };
    const item = addStatusItem(statusBar as any, shell, model, id =>
      revealed.push(id)
    );
    const [[id, options]] = registered;
    expect(id).toBe(STATUS_ITEM_ID);
    expect(options.item).toBe(item);
    expect(options.isActive()).toBe(false);
    let activeChanges = 0;
    item.activeChanged.connect(() => activeChanges++);

    const notebook = new FakeNotebook();
    notebook.switchTo('k1');
    shell.currentWidget = notebook;
    shell.currentChanged.emit(undefined);
    expect(options.isActive()).toBe(false); // the session is not known yet

    model.upsert(
      session({ id: 's1', name: 'demo', kernel_id: 'k1', status: 'RUNNING' })
    );
    expect(options.isActive()).toBe(true);
    expect(activeChanges).toBe(1);
    expect(item.node.textContent).toBe(
      'Cluster demo: 3 × 0.5 CPU, 512m · RUNNING'
    );
    expect(item.node.dataset.sessionId).toBe('s1');
    expect(item.node.title).toContain('s1');
    item.node.click();
    expect(revealed).toEqual(['s1']);

    // Another notebook, on a local kernel, comes to the front: nothing to say.
    const other = new FakeNotebook();
    other.switchTo('local');
    shell.currentWidget = other;
    shell.currentChanged.emit(undefined);
    expect(options.isActive()).toBe(false);
    expect(activeChanges).toBe(2);
    expect(item.node.textContent).toBe('');
    item.node.click();
    expect(revealed).toEqual(['s1']);

    // The first notebook's kernel changes while it is not current: ignored.
    notebook.switchTo(null);
    expect(activeChanges).toBe(2);
    item.dispose();
  });

  it('reveals with the keyboard too and lets go of the model', () => {
    const item = new ClusterStatusItem(model, id => revealed.push(id));
    const notebook = new FakeNotebook();
    item.setCurrent(notebook);
    notebook.switchTo('k2');
    model.upsert(session({ id: 's2', kernel_id: 'k2' }));
    item.node.dispatchEvent(new KeyboardEvent('keydown', { key: 'Enter' }));
    expect(revealed).toEqual(['s2']);
    item.dispose();
    model.upsert(session({ id: 's3', kernel_id: 'k2', created_at: 2000 }));
    expect(item.session?.id).toBe('s2'); // no longer follows
  });
});
