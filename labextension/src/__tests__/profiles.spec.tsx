import { Widget } from '@lumino/widgets';

import { ILaunchOptions } from '../api';
import { LaunchForm } from '../dialog';
import { initialValues, toRequest } from '../form';
import { profileChoices, valuesOfProfile } from '../profiles';
import { agent, launchOptions } from './fixtures';
import { act, render } from './render';

/** The served launch options with profiles, as `GET launch-options` lists them. */
function withProfiles(): ILaunchOptions {
  const options = launchOptions();
  options.profiles = [
    {
      name: 'pair',
      description: 'two small containers',
      scope: 'site',
      fields: {
        size: 2,
        cpu: 0.5,
        mem: '512m',
        mode: 'multi-node',
        env: { A: '1' },
        mounts: ['data:ro'],
        apps: { tb: 6006 }
      },
      disabled: false,
      reason: ''
    },
    {
      name: 'huge',
      description: '',
      scope: 'site',
      fields: { cpu: 64 },
      disabled: true,
      reason: 'cpu: at most 8 CPUs per container, got 64'
    }
  ];
  return options;
}

describe('profileChoices', () => {
  it('lists no profile first, then each, those that cannot launch disabled with the reason', () => {
    const choices = profileChoices(withProfiles());
    expect(choices.map(c => [c.value, c.disabled])).toEqual([
      ['', false],
      ['pair', false],
      ['huge', true]
    ]);
    expect(choices[1].label).toBe('pair: two small containers');
    expect(choices[2].reason).toBe('cpu: at most 8 CPUs per container, got 64');
    expect(choices[2].label).toBe(
      'huge (unavailable: cpu: at most 8 CPUs per container, got 64)'
    );
  });

  it('is only "no profile" for a server without profiles', () => {
    expect(profileChoices(launchOptions()).map(c => c.value)).toEqual(['']);
  });
});

describe('valuesOfProfile', () => {
  it("sets the profile's fields as the form holds them, the others as they were", () => {
    const options = withProfiles();
    const current = { ...initialValues(options), name: 'mine', shm: '128m' };
    const patch = valuesOfProfile(options, 'pair', current)!;
    expect(patch).toEqual({
      size: '2',
      cpu: '0.5',
      mem: '512m',
      mode: 'multi-node',
      env: 'A=1\n',
      apps: 'tb=6006\n',
      mounts: ['data:ro'],
      carried: {}
    });
    const request = toRequest({ ...current, ...patch });
    expect(request).toMatchObject({
      size: 2,
      cpu: 0.5,
      mem: '512m',
      shm: '128m', // not the profile's: kept
      name: 'mine',
      mode: 'multi-node',
      env: { A: '1' },
      apps: { tb: 6006 },
      mounts: ['data:ro']
    });
  });

  it("sends a job profile's retries, which the form has no control for", () => {
    // They were left out: a nightly job's retries never reached the launch.
    const options = withProfiles();
    const current = initialValues(options);
    options.profiles!.push({
      name: 'nightly',
      description: '',
      scope: 'user',
      fields: { command: 'python train.py', retries: 2, start_kernel: false },
      disabled: false,
      reason: ''
    });
    const patch = valuesOfProfile(options, 'nightly', current)!;
    expect(patch.carried).toEqual({ retries: 2 });
    expect(patch.command).toBe('python train.py');
    const request = toRequest({ ...current, ...patch });
    expect(request).toMatchObject({ command: 'python train.py', retries: 2 });
    expect(request.start_kernel).toBe(true); // the form's checkbox, not carried
    expect('retries' in toRequest(current)).toBe(false);
  });

  it('fills nothing for a disabled or unknown profile', () => {
    const options = withProfiles();
    const current = initialValues(options);
    expect(valuesOfProfile(options, 'huge', current)).toBeNull();
    expect(valuesOfProfile(options, 'nope', current)).toBeNull();
  });
});

describe('the launch form with profiles', () => {
  let form: LaunchForm;

  beforeEach(async () => {
    const options = withProfiles();
    form = new LaunchForm({
      options,
      values: initialValues(options),
      agents: [agent('local', 2, 24)],
      images: []
    });
    Widget.attach(form, document.body);
    await render(form);
  });

  afterEach(() => form.dispose());

  it('offers the profiles as its first field, the unavailable one disabled', () => {
    const first = form.node.querySelector('select')!;
    expect(first.name).toBe('profile');
    const entries = Array.from(first.options).map(o => [
      o.value,
      o.disabled,
      o.title
    ]);
    expect(entries).toEqual([
      ['', false, ''],
      ['pair', false, ''],
      ['huge', true, 'cpu: at most 8 CPUs per container, got 64']
    ]);
    expect(first.options[2].textContent).toMatch(/unavailable: cpu: at most 8/);
  });

  it('fills the fields when a profile is chosen', async () => {
    const select = form.node.querySelector(
      'select[name="profile"]'
    ) as HTMLSelectElement;
    await act(async () => {
      select.value = 'pair';
      select.dispatchEvent(new Event('change', { bubbles: true }));
    });
    await render(form);
    expect(form.profile).toBe('pair');
    expect(form.values.size).toBe('2');
    expect(form.values.cpu).toBe('0.5');
    const size = form.node.querySelector(
      'input[name="size"]'
    ) as HTMLInputElement;
    expect(size.value).toBe('2');
    expect(form.isValid).toBe(true);

    form.chooseProfile('huge'); // not offered by the select; refused here too
    await render(form);
    expect(form.profile).toBe('');
    expect(form.values.cpu).toBe('0.5');
  });

  it('sends nothing of a profile once none is chosen', async () => {
    form.chooseProfile('pair');
    form.set({ carried: { retries: 1 } }); // as a job profile would leave it
    form.chooseProfile('');
    await render(form);
    expect(form.profile).toBe('');
    expect(form.values.carried).toEqual({});
    expect('retries' in toRequest(form.values)).toBe(false);
  });
});

describe('the launch form without profiles', () => {
  it('has no profile field', async () => {
    const options = launchOptions();
    const form = new LaunchForm({
      options,
      values: initialValues(options),
      agents: [],
      images: []
    });
    Widget.attach(form, document.body);
    await render(form);
    expect(form.node.querySelector('select[name="profile"]')).toBeNull();
    form.dispose();
  });
});
