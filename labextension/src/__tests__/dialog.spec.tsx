import { Widget } from '@lumino/widgets';

import { ClusterAPIError, ILaunchCheck } from '../api';
import { LaunchDialog, LaunchForm } from '../dialog';
import { ILaunchValues, initialValues } from '../form';
import { hostNames } from '../formparts';
import { agent, launchOptions } from './fixtures';
import { act, render, setValue } from './render';

describe('hostNames', () => {
  it('names main1 then the subs', () => {
    expect(hostNames(1)).toEqual(['main1']);
    expect(hostNames(3)).toEqual(['main1', 'sub1', 'sub2']);
  });
});

describe('LaunchForm', () => {
  let form: LaunchForm;

  beforeEach(async () => {
    const options = launchOptions();
    form = new LaunchForm({
      options,
      values: initialValues(options),
      agents: [agent('local', 2, 24)],
      images: [
        {
          name: 'jupyter-cluster/kernel:latest',
          default: true,
          agents: { local: true }
        }
      ]
    });
    Widget.attach(form, document.body);
    await render(form);
  });

  afterEach(() => form.dispose());

  it('shows every field, both modes with their explanations, and the total', () => {
    const node = form.node;
    for (const name of [
      'image',
      'size',
      'cpu',
      'mem',
      'shm',
      'gpu',
      'resource_group',
      'name',
      'bootstrap',
      'command',
      'max_lifetime',
      'env'
    ]) {
      expect(node.querySelector(`[name="${name}"]`)).not.toBeNull();
    }
    const modes = node.querySelectorAll('input[name="mode"]');
    expect(modes.length).toBe(2);
    expect(node.textContent).toMatch(/All on one agent; waits \(PENDING\)/);
    expect(node.textContent).toMatch(/else spread over the group’s agents/);
    expect(node.querySelector('.jp-ClusterLaunch-total')!.textContent).toMatch(
      /1 × \(1 CPU, 1g memory, 64m shm\)/
    );
    expect(node.querySelector('.jp-ClusterLaunch-room')!.textContent).toMatch(
      /Agent local has room for the container now/
    );
    expect(node.querySelectorAll('input[name="mounts"]').length).toBe(2);
  });

  it('updates the total and the room as values change', async () => {
    const size = form.node.querySelector(
      'input[name="size"]'
    ) as HTMLInputElement;
    await act(async () => setValue(size, '3'));
    await render(form);
    expect(form.values.size).toBe('3');
    expect(
      form.node.querySelector('.jp-ClusterLaunch-hosts')!.textContent
    ).toBe('main1, sub1, sub2');
    expect(
      form.node.querySelector('.jp-ClusterLaunch-room')!.textContent
    ).toMatch(/No room now.*PENDING/);
    const cpu = form.node.querySelector(
      'input[name="cpu"]'
    ) as HTMLInputElement;
    await act(async () => setValue(cpu, '0.5'));
    await render(form);
    expect(
      form.node.querySelector('.jp-ClusterLaunch-total')!.textContent
    ).toMatch(/= 1.5 CPU, 3g memory/);
    expect(
      form.node.querySelector('.jp-ClusterLaunch-room')!.textContent
    ).toMatch(/Room now.*all 3 containers/);
  });

  it('shows errors for wrong values and is invalid until they are fixed', async () => {
    const mem = form.node.querySelector(
      'input[name="mem"]'
    ) as HTMLInputElement;
    await act(async () => setValue(mem, 'lots'));
    await render(form);
    expect(form.isValid).toBe(false);
    const row = form.node.querySelector('[data-field="mem"]')!;
    expect(row.classList.contains('jp-ClusterLaunch-invalid')).toBe(true);
    expect(row.textContent).toMatch(/A size such as 512m/);
    await act(async () => setValue(mem, '2g'));
    await render(form);
    expect(form.isValid).toBe(true);
    expect(form.getValue().mem).toBe('2g');
  });

  it('adds folders read-only or not', async () => {
    const data = form.node.querySelector(
      'input[name="mounts"][value="data"]'
    ) as HTMLInputElement;
    await act(async () => data.click());
    await render(form);
    expect(form.values.mounts).toEqual(['data']);
    const ro = form.node.querySelector(
      '[data-field="mounts"] .jp-ClusterLaunch-readonly input'
    ) as HTMLInputElement;
    await act(async () => ro.click());
    await render(form);
    expect(form.values.mounts).toEqual(['data:ro']);
  });

  it('shows the server’s message on the field it names', async () => {
    const options = launchOptions();
    const other = new LaunchForm({
      options,
      values: initialValues(options),
      agents: [],
      images: [],
      serverError: { field: 'name', message: 'name: a session named x exists' }
    });
    Widget.attach(other, document.body);
    await render(other);
    expect(
      other.node.querySelector('[data-field="name"]')!.textContent
    ).toMatch(/a session named x exists/);
    other.dispose();
  });
});

describe('LaunchDialog', () => {
  it('disables Launch while the form is invalid and resolves with the values', async () => {
    const options = launchOptions();
    const form = new LaunchForm({
      options,
      values: initialValues(options),
      agents: [],
      images: []
    });
    const dialog = new LaunchDialog(form);
    const result = dialog.launch();
    await render(form);
    const launchButton = dialog.node.querySelector(
      '.jp-Dialog-button.jp-mod-accept'
    ) as HTMLButtonElement;
    expect(launchButton.textContent).toMatch(/Launch/);

    const size = form.node.querySelector(
      'input[name="size"]'
    ) as HTMLInputElement;
    await act(async () => setValue(size, '99'));
    await render(form);
    expect(launchButton.disabled).toBe(true);
    dialog.resolve(1);
    expect(form.node.querySelector('[data-field="size"]')!.textContent).toMatch(
      /from 1 to 16/
    );

    await act(async () => setValue(size, '3'));
    await render(form);
    expect(launchButton.disabled).toBe(false);
    dialog.resolve(1);
    const { button, value } = await result;
    expect(button.accept).toBe(true);
    expect(value!.size).toBe('3');
  });
});

describe("LaunchForm with the server's dry run", () => {
  const WAIT =
    '2nd in the queue of resource group default (first in, first out); ' +
    'waiting behind 1 earlier session(s) (next: another user’s session)';
  /** Longer than the form waits after the last change before it asks. */
  const settle = () => new Promise(resolve => setTimeout(resolve, 450));
  let form: LaunchForm;
  let asked: ILaunchValues[];
  let answer: () => Promise<ILaunchCheck>;

  const room = () =>
    form.node.querySelector('.jp-ClusterLaunch-room')!.textContent;

  beforeEach(async () => {
    const options = launchOptions();
    asked = [];
    answer = async () => ({ starts_now: false, placement: {}, reason: WAIT });
    form = new LaunchForm({
      options,
      values: initialValues(options),
      agents: [agent('local', 2, 24)],
      images: [],
      check: values => {
        asked.push(values);
        return answer();
      }
    });
    Widget.attach(form, document.body);
    await render(form);
  });

  afterEach(() => form.dispose());

  it('shows the estimate at once, then the server’s answer for the values', async () => {
    expect(room()).toMatch(/Room now.*Agent local has room/); // the estimate
    await settle();
    await render(form);
    expect(room()).toBe(`No room nowThe session would wait (PENDING): ${WAIT}`);
    expect(asked.length).toBe(1);

    answer = async () => ({
      starts_now: true,
      placement: { main1: 'a1', sub1: 'a1', sub2: 'a2' },
      reason: ''
    });
    const size = form.node.querySelector(
      'input[name="size"]'
    ) as HTMLInputElement;
    const cpu = form.node.querySelector(
      'input[name="cpu"]'
    ) as HTMLInputElement;
    await act(async () => setValue(size, '3'));
    await act(async () => setValue(cpu, '0.5'));
    await render(form);
    expect(form.checked).toBeNull(); // the answer was for other values
    await settle();
    await render(form);
    expect(asked.length).toBe(2); // typing quickly asks once, for the last values
    expect(asked[1].size).toBe('3');
    expect(asked[1].cpu).toBe('0.5');
    expect(room()).toMatch(
      /Room now.*No single agent has room for all 3 containers; they would be spread over a1, a2\./
    );
  });

  it('says why the server would refuse the launch', async () => {
    answer = async () => {
      throw new ClusterAPIError(
        'bob already has 3 active cluster session(s) and the limit is 3; terminate one first',
        409
      );
    };
    await act(async () => form.setAgents([agent('local', 2, 24)]));
    await settle();
    await render(form);
    expect(room()).toBe(
      'RefusedThe launch would be refused: bob already has 3 active cluster ' +
        'session(s) and the limit is 3; terminate one first'
    );
  });

  it('keeps the estimate when the server does not answer', async () => {
    answer = async () => {
      throw new ClusterAPIError('The Jupyter server did not answer', 0);
    };
    await act(async () => form.setAgents([agent('local', 2, 24)]));
    await settle();
    await render(form);
    expect(form.checked).toBeNull();
    expect(room()).toMatch(
      /Room now.*Agent local has room for the container now/
    );
  });

  it('does not ask while a value is wrong', async () => {
    const mem = form.node.querySelector(
      'input[name="mem"]'
    ) as HTMLInputElement;
    await settle();
    const before = asked.length;
    await act(async () => setValue(mem, 'lots'));
    await settle();
    expect(asked.length).toBe(before);
  });
});
