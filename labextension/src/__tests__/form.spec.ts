import { initialValues, modes, toRequest, validate } from '../form';
import {
  containersThatFit,
  describeTotals,
  fromCheck,
  room,
  totals
} from '../room';
import { agent, launchOptions } from './fixtures';

describe('initialValues', () => {
  it('takes the server defaults', () => {
    const values = initialValues(launchOptions());
    expect(values).toEqual({
      image: 'jupyter-cluster/kernel:latest',
      size: '1',
      mode: 'single-node',
      cpu: '1',
      mem: '1g',
      shm: '64m',
      gpu: '0',
      mounts: [],
      resource_group: 'default',
      name: '',
      bootstrap: '',
      command: '',
      max_lifetime: '',
      env: '',
      apps: '',
      start_kernel: true
    });
  });

  it('lets the user settings override them, but only with allowed choices', () => {
    const values = initialValues(
      launchOptions(),
      {
        size: 3,
        cpu: 0.5,
        mode: 'multi-node',
        image: 'not-allowed:1',
        mounts: ['data:ro', 'gone'],
        bootstrap: 'echo hi'
      },
      false
    );
    expect(values.size).toBe('3');
    expect(values.cpu).toBe('0.5');
    expect(values.mode).toBe('multi-node');
    expect(values.image).toBe('jupyter-cluster/kernel:latest');
    expect(values.mounts).toEqual(['data:ro']);
    expect(values.bootstrap).toBe('echo hi');
    expect(values.start_kernel).toBe(false);
  });
});

describe('validate', () => {
  const options = launchOptions();
  const valid = initialValues(options);

  it('accepts the defaults', () => {
    expect(validate(valid, options)).toEqual({});
  });

  it.each([
    ['size', '0'],
    ['size', '17'],
    ['size', '2.5'],
    ['cpu', '0'],
    ['cpu', '9'],
    ['cpu', 'lots'],
    ['mem', '1m'],
    ['mem', '17g'],
    ['mem', 'big'],
    ['shm', '5g'],
    ['gpu', '9'],
    ['gpu', '-1'],
    ['image', 'nope'],
    ['resource_group', 'elsewhere'],
    ['name', '-bad'],
    ['name', 'has space'],
    ['env', 'TOKEN'],
    ['env', '1A=x'],
    ['env', 'A=1\nA=2']
  ])('names the field when %s is %p', (name, value) => {
    const errors = validate({ ...valid, [name]: value }, options);
    expect(Object.keys(errors)).toEqual([name]);
  });

  it('refuses more shared memory than memory, as the server does', () => {
    const errors = validate({ ...valid, mem: '512m', shm: '1g' }, options);
    expect(Object.keys(errors)).toEqual(['shm']);
    expect(errors.shm).toMatch(/At most the memory per container \(512m\)/);
    expect(validate({ ...valid, mem: '512m', shm: '512m' }, options)).toEqual(
      {}
    );
  });

  it('checks data folders against the known ones', () => {
    expect(
      validate({ ...valid, mounts: ['data', 'models:ro'] }, options)
    ).toEqual({});
    expect(validate({ ...valid, mounts: ['other'] }, options).mounts).toMatch(
      /other/
    );
  });

  it('checks variables without quoting a value', () => {
    expect(validate({ ...valid, env: 'A=1\n\n_B=x=y \n' }, options)).toEqual(
      {}
    );
    const error = validate({ ...valid, env: 'A=1\ns3cret' }, options).env!;
    expect(error).toMatch(/Line 2 is not KEY=VALUE/);
    expect(error).not.toMatch(/s3cret/);
  });

  it('limits the bootstrap command', () => {
    const long = 'x'.repeat(65537);
    expect(
      validate({ ...valid, bootstrap: long }, options).bootstrap
    ).toBeTruthy();
  });
});

describe('toRequest', () => {
  it('sends numbers as numbers, sizes as text, empty texts as null', () => {
    const values = {
      ...initialValues(launchOptions()),
      size: '3',
      cpu: '500m',
      gpu: '0',
      name: '  ',
      bootstrap: '',
      env: 'TOKEN=a b=c\r\n\nEMPTY=\n'
    };
    expect(toRequest(values)).toEqual({
      image: 'jupyter-cluster/kernel:latest',
      size: 3,
      mode: 'single-node',
      cpu: 0.5,
      mem: '1g',
      shm: '64m',
      gpu: 0,
      mounts: [],
      resource_group: 'default',
      name: null,
      bootstrap: null,
      command: null,
      max_lifetime: null,
      env: { TOKEN: 'a b=c', EMPTY: '' },
      start_kernel: true
    });
    expect(toRequest({ ...values, env: ' \n' }).env).toBeNull();
  });

  it('sends a batch command and a lifetime, and checks the lifetime', () => {
    const options = launchOptions();
    const valid = initialValues(options);
    const batch = {
      ...valid,
      command: 'python train.py',
      max_lifetime: ' 2h '
    };
    expect(validate(batch, options).max_lifetime).toBeUndefined();
    const request = toRequest(batch);
    expect(request.command).toBe('python train.py');
    expect(request.max_lifetime).toBe('2h');
    expect(
      validate({ ...batch, max_lifetime: 'soon' }, options).max_lifetime
    ).toMatch(/duration such as 90s, 30m or 2h/);
  });
});

describe('totals and room', () => {
  const values = {
    ...initialValues(launchOptions()),
    size: '3',
    cpu: '0.5',
    mem: '2g'
  };

  it('multiplies per-container resources by the size', () => {
    const t = totals(values)!;
    expect(t.totalCpu).toBe(1.5);
    expect(t.totalMem).toBe(6 * 1024 ** 3);
    expect(describeTotals(t)).toBe(
      '3 × (0.5 CPU, 2g memory, 64m shm) = 1.5 CPU, 6g memory, 192m shm'
    );
    expect(totals({ ...values, cpu: 'x' })).toBeNull();
  });

  it('counts containers that fit an agent as the scheduler does', () => {
    const t = totals(values)!;
    expect(containersThatFit(agent('a', 2, 24), t)).toBe(4);
    expect(containersThatFit(agent('a', 8, 5), t)).toBe(2);
    expect(
      containersThatFit({ ...agent('a', 8, 8), reachable: false }, t)
    ).toBe(0);
    const gpu = totals({ ...values, gpu: '1' })!;
    expect(containersThatFit(agent('a', 8, 24, 'default', 2), gpu)).toBe(2);
  });

  it('words the server’s dry run as the estimate words its own', () => {
    expect(
      fromCheck({ starts_now: true, placement: { main1: 'big' }, reason: '' })
    ).toEqual({
      now: true,
      agent: 'big',
      spread: [],
      message: 'Agent big has room for the container now.'
    });
    const spread = fromCheck({
      starts_now: true,
      placement: { main1: 'a1', sub1: 'a2', sub2: 'a2' },
      reason: ''
    });
    expect(spread.spread).toEqual(['a1', 'a2']);
    expect(spread.message).toBe(
      'No single agent has room for all 3 containers; they would be spread over a1, a2.'
    );
    const waiting = fromCheck({
      starts_now: false,
      placement: {},
      reason: '1st in the queue of resource group default (priority): …'
    });
    expect(waiting.now).toBe(false);
    expect(waiting.message).toBe(
      'The session would wait (PENDING): 1st in the queue of resource group default (priority): …'
    );
    const refused = fromCheck({ refusal: 'over the limit of 2 GPUs' });
    expect(refused.refused).toBe(true);
    expect(refused.message).toBe(
      'The launch would be refused: over the limit of 2 GPUs'
    );
  });

  it('says when one agent has room for all', () => {
    const t = totals(values)!;
    const r = room(t, 'single-node', 'default', [
      agent('small', 1, 24),
      agent('big', 2, 24)
    ]);
    expect(r).toMatchObject({ now: true, agent: 'big' });
    expect(r.message).toBe('Agent big has room for all 3 containers now.');
  });

  it('says single-node would be PENDING when no agent has room', () => {
    const t = totals(values)!;
    const r = room(t, 'single-node', 'default', [
      agent('a', 1, 24),
      agent('b', 1, 24)
    ]);
    expect(r.now).toBe(false);
    expect(r.message).toMatch(/PENDING/);
    expect(r.message).toMatch(/at most 2 fit on one/);
  });

  it('spreads multi-node over agents when needed', () => {
    const t = totals(values)!;
    const r = room(t, 'multi-node', 'default', [
      agent('a', 1, 24),
      agent('b', 1, 24)
    ]);
    expect(r).toMatchObject({ now: true, agent: null, spread: ['a', 'b'] });
    const none = room(t, 'multi-node', 'default', [agent('a', 0.5, 24)]);
    expect(none.now).toBe(false);
    expect(none.message).toMatch(/room for 1 of 3/);
  });

  it('only counts agents of the chosen group', () => {
    const t = totals(values)!;
    expect(room(t, 'single-node', 'gpu', [agent('a', 8, 24)]).message).toMatch(
      /has no agents/
    );
  });

  it('explains both modes in one line each', () => {
    expect(modes().map(m => m.value)).toEqual(['single-node', 'multi-node']);
    for (const mode of modes()) {
      expect(mode.help).not.toMatch(/\n/);
    }
  });
});
