import { ReactWidget } from '@jupyterlab/ui-components';
import { CommandRegistry } from '@lumino/commands';
import { Widget } from '@lumino/widgets';
import * as React from 'react';

import { AGENTS_DEBOUNCE_MS, AGENTS_POLL_MS, AgentsModel } from '../agents';
import { AgentsSection } from '../agentsview';
import { ClusterClient, IAgent } from '../api';
import { SessionsModel } from '../sessions';
import { ClusterSidebar } from '../sidebar';
import { agent, session } from './fixtures';
import { act, render } from './render';

const GIB = 1024 ** 3;

/** A client whose `agents()` answers `answer` (or fails with it). */
function fakeClient(answer: IAgent[] | Error = []) {
  return {
    agents: jest.fn(() =>
      answer instanceof Error ? Promise.reject(answer) : Promise.resolve(answer)
    )
  };
}

/** Advance fake time by `ms` and let what it starts (reads, renders) settle. */
async function advance(ms: number): Promise<void> {
  await act(async () => {
    await jest.advanceTimersByTimeAsync(ms);
  });
}

/** Let pending promises (a read of the agents) settle. */
const settle = () => advance(0);

describe('AgentsModel', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('reads now, then every poll interval, until stopped', async () => {
    const client = fakeClient([agent('agent1', 4, 8)]);
    const model = new AgentsModel({ client });
    const changed = jest.fn();
    model.changed.connect(changed);
    model.start();
    model.start(); // idempotent
    await settle();
    expect(client.agents).toHaveBeenCalledTimes(1);
    expect(model.loaded).toBe(true);
    expect(model.agents.map(a => a.id)).toEqual(['agent1']);
    expect(changed).toHaveBeenCalledTimes(1);

    await advance(AGENTS_POLL_MS);
    expect(client.agents).toHaveBeenCalledTimes(2);
    await advance(AGENTS_POLL_MS);
    expect(client.agents).toHaveBeenCalledTimes(3);

    model.stop();
    expect(model.running).toBe(false);
    expect(jest.getTimerCount()).toBe(0);
    await advance(AGENTS_POLL_MS * 5);
    expect(client.agents).toHaveBeenCalledTimes(3);
    model.dispose();
  });

  it('leaves no timer when disposed, even with a read in flight', async () => {
    let resolve: (agents: IAgent[]) => void = () => undefined;
    const client = {
      agents: jest.fn(() => new Promise<IAgent[]>(r => (resolve = r)))
    };
    const model = new AgentsModel({ client });
    model.start();
    model.dispose();
    resolve([agent('agent1', 4, 8)]);
    await settle();
    expect(jest.getTimerCount()).toBe(0);
    model.start(); // no effect once disposed
    await advance(AGENTS_POLL_MS * 3);
    expect(client.agents).toHaveBeenCalledTimes(1);
    expect(model.isDisposed).toBe(true);
  });

  it('reads again soon after refreshSoon, once per burst, only while running', async () => {
    const client = fakeClient();
    const model = new AgentsModel({ client });
    model.refreshSoon();
    await advance(AGENTS_POLL_MS);
    expect(client.agents).not.toHaveBeenCalled();

    model.start();
    await settle();
    expect(client.agents).toHaveBeenCalledTimes(1);
    model.refreshSoon();
    await advance(AGENTS_DEBOUNCE_MS / 2);
    model.refreshSoon();
    model.refreshSoon();
    await advance(AGENTS_DEBOUNCE_MS / 2);
    expect(client.agents).toHaveBeenCalledTimes(2);
    // Then the usual interval again.
    await advance(AGENTS_POLL_MS - 1);
    expect(client.agents).toHaveBeenCalledTimes(2);
    await advance(1);
    expect(client.agents).toHaveBeenCalledTimes(3);
    model.dispose();
    expect(jest.getTimerCount()).toBe(0);
  });

  it('keeps the reason of a failed read, and forgets it after a good one', async () => {
    const client = fakeClient(new Error('The server answered 500'));
    const model = new AgentsModel({ client });
    model.start();
    await settle();
    expect(model.error).toBe('The server answered 500');
    expect(model.loaded).toBe(false);
    client.agents.mockImplementation(() => Promise.resolve([]));
    await advance(AGENTS_POLL_MS);
    expect(model.error).toBeNull();
    expect(model.loaded).toBe(true);
    model.dispose();
  });
});

describe('AgentsSection', () => {
  let model: AgentsModel;
  let widget: Widget;

  async function show(answer: IAgent[] | Error): Promise<void> {
    model = new AgentsModel({ client: fakeClient(answer) });
    widget = ReactWidget.create(<AgentsSection model={model} />);
    await act(async () => Widget.attach(widget, document.body));
    await render(widget);
    await act(async () => model.start());
  }

  afterEach(async () => {
    await act(async () => widget.dispose());
    model.dispose();
  });

  const row = (id: string) =>
    widget.node.querySelector(`.jp-ClusterAgent[data-agent="${id}"]`)!;

  it('shows available, unavailable and warned agents with their reasons', async () => {
    const busy = agent('agent1', 4, 8);
    busy.free = { cpu: 3, mem: 6 * GIB, gpu: 0 };
    await show([
      busy,
      {
        ...agent('agent2', 8, 16, 'gpu', 2),
        reachable: false,
        message: 'Cannot reach the Docker daemon at tcp://agent2:2376'
      },
      {
        ...agent('agent3', 2, 4),
        swarm: 'ktr7sbrnu4g5h4mosh9m9ugz6',
        warning:
          "not in the same Docker Swarm as agent2: multi-node sessions can't span them"
      }
    ]);
    expect(
      widget.node.querySelector('.jp-ClusterAgents-summary')!.textContent
    ).toBe('2 of 3 available');

    const one = row('agent1');
    expect(one.getAttribute('data-state')).toBe('available');
    expect(one.querySelector('.jp-ClusterStatus')!.textContent).toBe(
      'available'
    );
    expect(one.querySelector('.jp-ClusterAgent-group')!.textContent).toBe(
      'default'
    );
    expect(one.querySelector('.jp-ClusterAgent-detail')!.textContent).toBe(
      'free 3/4 CPU · 6g/8g mem'
    );
    expect(one.querySelector('.jp-ClusterAgent-reason')).toBeNull();
    expect(one.getAttribute('title')).toMatch(/agent1.*default.*available/);

    const two = row('agent2');
    expect(two.getAttribute('data-state')).toBe('unavailable');
    expect(
      two.querySelector('.jp-ClusterStatus-unavailable')!.textContent
    ).toBe('unavailable');
    expect(two.querySelector('.jp-ClusterAgent-detail')!.textContent).toBe(
      'free 8/8 CPU · 16g/16g mem · 2/2 GPU'
    );
    expect(
      two.querySelector('.jp-ClusterAgent-reason.jp-mod-error')!.textContent
    ).toBe('Cannot reach the Docker daemon at tcp://agent2:2376');
    expect(two.getAttribute('title')).toMatch(/Cannot reach/);

    const three = row('agent3');
    expect(three.getAttribute('data-state')).toBe('available');
    expect(
      three.querySelector('.jp-ClusterAgent-reason.jp-mod-warn')!.textContent
    ).toMatch(/not in the same Docker Swarm as agent2/);
    expect(three.getAttribute('title')).toMatch(
      /Docker Swarm ktr7sbrnu4g5h4mosh9m9ugz6/
    );
  });

  it('folds and unfolds', async () => {
    await show([agent('agent1', 4, 8)]);
    const toggle = widget.node.querySelector(
      '.jp-ClusterAgents-toggle'
    ) as HTMLButtonElement;
    expect(toggle.getAttribute('aria-expanded')).toBe('true');
    await act(async () => toggle.click());
    expect(toggle.getAttribute('aria-expanded')).toBe('false');
    expect(widget.node.querySelector('.jp-ClusterAgent')).toBeNull();
    await act(async () => toggle.click());
    expect(widget.node.querySelector('.jp-ClusterAgent')).not.toBeNull();
  });

  it('says so when there are no agents', async () => {
    await show([]);
    expect(
      widget.node.querySelector('.jp-ClusterAgents-empty')!.textContent
    ).toBe('No agents.');
  });

  it('shows a failed read as one line in the section', async () => {
    await show(new Error('Not allowed: the server refused the request'));
    const error = widget.node.querySelector('.jp-ClusterAgents-error')!;
    expect(error.textContent).toBe(
      'Could not read the agents: Not allowed: the server refused the request'
    );
    expect(widget.node.querySelector('.jp-ClusterAgents-empty')).toBeNull();
    expect(document.querySelector('.jp-Dialog')).toBeNull();
  });
});

describe('ClusterSidebar polls the agents', () => {
  let client: ReturnType<typeof fakeClient>;
  let model: SessionsModel;
  let sidebar: ClusterSidebar;

  beforeEach(() => {
    jest.useFakeTimers();
    client = fakeClient([agent('agent1', 4, 8)]);
    model = new SessionsModel({ client: client as unknown as ClusterClient });
    sidebar = new ClusterSidebar(model, new CommandRegistry());
  });

  afterEach(async () => {
    await act(async () => sidebar.dispose());
    model.dispose();
    jest.useRealTimers();
  });

  it('only while it is visible', async () => {
    sidebar.hide();
    await act(async () => Widget.attach(sidebar, document.body));
    await settle();
    expect(sidebar.agents.running).toBe(false);
    expect(client.agents).not.toHaveBeenCalled();

    await act(async () => sidebar.show());
    await settle();
    expect(sidebar.agents.running).toBe(true);
    expect(client.agents).toHaveBeenCalledTimes(1);
    await advance(AGENTS_POLL_MS);
    expect(client.agents).toHaveBeenCalledTimes(2);

    await act(async () => sidebar.hide());
    expect(sidebar.agents.running).toBe(false);
    await advance(AGENTS_POLL_MS * 5);
    expect(client.agents).toHaveBeenCalledTimes(2);

    await act(async () => sidebar.show());
    await settle();
    expect(client.agents).toHaveBeenCalledTimes(3);
    await act(async () => Widget.detach(sidebar));
    expect(sidebar.agents.running).toBe(false);
  });

  it('reads them again soon after a session changes', async () => {
    await act(async () => Widget.attach(sidebar, document.body));
    await settle();
    expect(client.agents).toHaveBeenCalledTimes(1);
    await act(async () => {
      model.upsert(session());
      model.upsert(session({ status: 'RUNNING', updated_at: 2000 }));
    });
    await advance(AGENTS_DEBOUNCE_MS);
    expect(client.agents).toHaveBeenCalledTimes(2);
  });

  it('leaves no timer behind when disposed', async () => {
    await act(async () => Widget.attach(sidebar, document.body));
    await settle();
    expect(sidebar.agents.running).toBe(true);
    await act(async () => sidebar.dispose());
    expect(sidebar.agents.isDisposed).toBe(true);
    await act(async () => jest.runOnlyPendingTimers()); // what rendering left
    await advance(AGENTS_POLL_MS * 5);
    expect(client.agents).toHaveBeenCalledTimes(1);
    expect(jest.getTimerCount()).toBe(0);
  });
});
