import { ISessionContext } from '@jupyterlab/apputils';
import { Signal } from '@lumino/signaling';
import { Widget } from '@lumino/widgets';

import { ClusterClient } from '../api';
import {
  ClusterIndicatorExtension,
  ClusterKernelIndicator,
  describeShape,
  indicatorLabel,
  revealSession,
  sessionOfKernel
} from '../indicator';
import { SessionsModel } from '../sessions';
import { session } from './fixtures';

const MIB = 1024 ** 2;

/** The parts of a notebook's session context the indicator reads. */
class FakeContext {
  kernelId: string | null = null;
  readonly kernelChanged = new Signal<this, void>(this);
  get session(): any {
    return this.kernelId ? { kernel: { id: this.kernelId } } : null;
  }
  switchTo(id: string | null): void {
    this.kernelId = id;
    this.kernelChanged.emit();
  }
}

describe('matching and words', () => {
  const a = session({ id: 'a', name: 'alpha', kernel_id: 'k1' });
  const b = session({ id: 'b', name: 'beta', kernel_id: 'k2' });

  it('finds the session whose kernel the notebook runs on', () => {
    expect(sessionOfKernel([a, b], 'k2')?.id).toBe('b');
    expect(sessionOfKernel([a, b], 'other')).toBeUndefined();
    expect(sessionOfKernel([a, b], null)).toBeUndefined();
    expect(sessionOfKernel([session({ kernel_id: null })], undefined)).toBe(
      undefined
    );
  });

  it('says the real shape as the kernelspecs do', () => {
    expect(describeShape(a)).toBe('3 × 0.5 CPU, 512m');
    expect(indicatorLabel(a)).toBe('Cluster alpha: 3 × 0.5 CPU, 512m');
    const big = session({
      size: 2,
      mode: 'multi-node',
      resources: { cpu: 4, mem: 2048 * MIB, gpu: 1 }
    });
    expect(describeShape(big)).toBe('2 × 4 CPU, 2g, 1 GPU (multi-node)');
  });
});

describe('ClusterKernelIndicator', () => {
  let model: SessionsModel;
  let context: FakeContext;
  let revealed: string[];
  let item: ClusterKernelIndicator;

  beforeEach(() => {
    model = new SessionsModel({ client: {} as unknown as ClusterClient });
    context = new FakeContext();
    revealed = [];
    item = new ClusterKernelIndicator(
      model,
      context as unknown as ISessionContext,
      id => revealed.push(id)
    );
  });

  afterEach(() => {
    item.dispose();
    model.dispose();
  });

  it('is hidden while the kernel is no cluster session', () => {
    context.switchTo('local-kernel');
    model.upsert(session({ id: 's1', kernel_id: 'k1' }));
    expect(item.isHidden).toBe(true);
    expect(item.session).toBeUndefined();
    item.node.click();
    expect(revealed).toEqual([]);
  });

  it('names the session and follows the model and the kernel', () => {
    context.switchTo('k1');
    expect(item.isHidden).toBe(true); // not known yet
    model.upsert(
      session({ id: 's1', name: 'demo', kernel_id: 'k1', updated_at: 1 })
    );
    expect(item.isHidden).toBe(false);
    expect(item.node.textContent).toBe(
      'Cluster demo: 3 × 0.5 CPU, 512mPREPARING'
    );
    expect(item.node.dataset.sessionId).toBe('s1');

    model.upsert(
      session({
        id: 's1',
        name: 'demo',
        kernel_id: 'k1',
        status: 'RUNNING',
        updated_at: 2
      })
    );
    expect(item.node.dataset.status).toBe('RUNNING');
    expect(
      item.node.querySelector('.jp-ClusterKernelIndicator-status')?.className
    ).toContain('jp-ClusterStatus-RUNNING');

    item.node.click();
    expect(revealed).toEqual(['s1']);

    context.switchTo(null); // the kernel shut down or was changed
    expect(item.isHidden).toBe(true);
    expect(item.node.dataset.sessionId).toBeUndefined();
  });

  it('stops following once disposed', () => {
    item.dispose();
    context.switchTo('k1');
    model.upsert(session({ id: 's1', kernel_id: 'k1' }));
    expect(item.session).toBeUndefined();
  });
});

describe('ClusterIndicatorExtension', () => {
  it('puts the item before the kernel name, or last without one', () => {
    const model = new SessionsModel({ client: {} as unknown as ClusterClient });
    const ext = new ClusterIndicatorExtension(model, () => undefined);
    const calls: string[] = [];
    const toolbar = {
      insertAfter: (at: string, name: string) => {
        calls.push(`after ${at} ${name}`);
        return false;
      },
      addItem: (name: string) => {
        calls.push(`add ${name}`);
        return true;
      }
    };
    const context = { sessionContext: new FakeContext() as any };
    const item = ext.createNew({ toolbar } as any, context);
    expect(item).toBeInstanceOf(ClusterKernelIndicator);
    expect(calls).toEqual([
      'after spacer clusterSession',
      'add clusterSession'
    ]);
    item.dispose();
    model.dispose();
  });
});

describe('revealSession', () => {
  it('shows the sidebar and marks the session for a moment', async () => {
    const sidebar = new Widget();
    sidebar.node.innerHTML =
      '<li class="jp-ClusterSession" data-session-id="x"></li>' +
      '<li class="jp-ClusterSession" data-session-id="s1"></li>';
    const row = sidebar.node.children[1] as HTMLElement;
    row.scrollIntoView = jest.fn();
    const activate = jest.fn();
    revealSession(activate, sidebar, 's1', 30);
    expect(activate).toHaveBeenCalled();
    await new Promise(r => setTimeout(r, 20));
    expect(row.classList.contains('jp-mod-highlighted')).toBe(true);
    expect(row.scrollIntoView).toHaveBeenCalled();
    expect(
      sidebar.node.children[0].classList.contains('jp-mod-highlighted')
    ).toBe(false);
    await new Promise(r => setTimeout(r, 40));
    expect(row.classList.contains('jp-mod-highlighted')).toBe(false);
    sidebar.dispose();
  });
});
