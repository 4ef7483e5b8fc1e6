import { Widget } from '@lumino/widgets';

import { ILaunchOptions } from '../api';
import { appsRequest, appsText, MAX_APPS, parseApps } from '../appsfield';
import { LaunchForm } from '../dialog';
import { initialValues, toRequest, validate } from '../form';
import { launchOptions } from './fixtures';
import { act, render, setValue } from './render';

describe('parseApps', () => {
  it('reads NAME=PORT lines in order, skipping blank lines and spaces', () => {
    const apps = parseApps(' tensorboard = 6006\r\n\n  \nweb.ui-2=8080\n');
    expect(apps).toEqual({ tensorboard: 6006, 'web.ui-2': 8080 });
    expect(Object.keys(apps)).toEqual(['tensorboard', 'web.ui-2']);
    expect(parseApps('')).toEqual({});
  });

  it('takes the edges the server takes', () => {
    const name = 'a'.repeat(40);
    expect(parseApps(`${name}=1\nb=65535`)).toEqual({ [name]: 1, b: 65535 });
    expect(parseApps('constructor=1\ntoString=2')).toEqual({
      constructor: 1,
      toString: 2
    });
    const most = Array.from({ length: MAX_APPS }, (_, i) => `a${i}=${i + 1}`);
    expect(Object.keys(parseApps(most.join('\n'))).length).toBe(16);
  });

  it.each([
    ['tensorboard', /^Line 1 is not NAME=PORT; write e\.g\. tensorboard=6006/],
    ['a=1\n\n-b=2', /^Line 3: "-b" is not an app name; use letters, digits/],
    ['=6006', /^Line 1: "" is not an app name/],
    ['a b=1', /^Line 1: "a b" is not an app name/],
    [`${'a'.repeat(41)}=1`, /is not an app name.*at most 40/],
    [
      'tb=',
      /^Line 1: "" is not a port number; give a whole number from 1 to 65535/
    ],
    ['tb=60x6', /^Line 1: "60x6" is not a port number/],
    ['tb=-1', /^Line 1: "-1" is not a port number/],
    ['tb=6006.5', /is not a port number/],
    ['tb=0', /^Line 1: port 0 is out of range; use 1 to 65535/],
    ['tb=65536', /^Line 1: port 65536 is out of range/],
    ['tb=000001', /^Line 1: port 000001 is out of range/],
    ['tb=1\nx=2\ntb=3', /^Line 3: tb is declared twice/],
    ['tb=6006\nweb=6006', /^Line 2: port 6006 is already used by tb/]
  ])('refuses %p with a message naming the line', (text, message) => {
    const error = parseApps(text);
    expect(typeof error).toBe('string');
    expect(error).toMatch(message);
  });

  it(`refuses more than ${MAX_APPS} apps`, () => {
    const lines = Array.from({ length: 17 }, (_, i) => `a${i}=${i + 1}`);
    expect(parseApps(lines.join('\n'))).toBe(
      'Line 17: at most 16 apps per session.'
    );
  });
});

describe('appsText', () => {
  it("writes a profile's apps as lines and ignores anything else", () => {
    expect(appsText({ tb: 6006, web: 8080 })).toBe('tb=6006\nweb=8080\n');
    expect(parseApps(appsText({ tb: 6006, web: 8080 }))).toEqual({
      tb: 6006,
      web: 8080
    });
    for (const other of [null, undefined, 'tb=1', ['tb=1'], 5]) {
      expect(appsText(other)).toBe('');
    }
  });
});

describe('the apps of the launch request', () => {
  const values = () => initialValues(launchOptions());

  it('sends the declared apps as an object', () => {
    const request = toRequest({ ...values(), apps: 'tb=6006\nweb = 8080\n' });
    expect(request.apps).toEqual({ tb: 6006, web: 8080 });
    expect(JSON.parse(JSON.stringify(request)).apps).toEqual({
      tb: 6006,
      web: 8080
    });
  });

  it('leaves apps out when none are declared', () => {
    expect('apps' in toRequest(values())).toBe(false);
    expect('apps' in toRequest({ ...values(), apps: ' \n\n' })).toBe(false);
    expect(appsRequest('nope')).toEqual({});
  });

  it('is checked only when the server lists the field', () => {
    const options = launchOptions();
    const wrong = { ...values(), apps: 'tb=6006\ntb=6007' };
    expect(validate(wrong, options)).toEqual({
      apps: 'Line 2: tb is declared twice.'
    });
    expect(validate({ ...wrong, apps: 'tb=6006' }, options)).toEqual({});
    const older: ILaunchOptions = {
      ...options,
      fields: options.fields.filter(f => f.name !== 'apps')
    };
    expect(validate(wrong, older)).toEqual({});
  });

  it("is filled from the user's defaults and the server's", () => {
    const options = launchOptions();
    expect(initialValues(options, { apps: { tb: 6006 } } as any).apps).toBe(
      'tb=6006\n'
    );
    options.defaults.apps = { web: 8080 };
    expect(initialValues(options).apps).toBe('web=8080\n');
  });
});

describe('the Apps field of the launch form', () => {
  let form: LaunchForm | null = null;

  async function open(options: ILaunchOptions): Promise<LaunchForm> {
    form = new LaunchForm({
      options,
      values: initialValues(options),
      agents: [],
      images: []
    });
    Widget.attach(form, document.body);
    await render(form);
    return form;
  }

  afterEach(() => {
    form?.dispose();
    form = null;
  });

  it('shows per-line errors while typing and sends the apps once fixed', async () => {
    const f = await open(launchOptions());
    const area = f.node.querySelector(
      'textarea[name="apps"]'
    ) as HTMLTextAreaElement;
    expect(area).not.toBeNull();
    expect(area.placeholder).toMatch(/NAME=PORT, one a line/);
    const row = f.node.querySelector('[data-field="apps"]')!;
    expect(row.querySelector('label')!.textContent).toBe('Apps');

    await act(async () => setValue(area, 'tensorboard=6006\nweb=99999'));
    await render(f);
    expect(f.isValid).toBe(false);
    expect(row.classList.contains('jp-ClusterLaunch-invalid')).toBe(true);
    expect(row.querySelector('[role="alert"]')!.textContent).toBe(
      'Line 2: port 99999 is out of range; use 1 to 65535.'
    );

    await act(async () => setValue(area, 'tensorboard=6006\nweb=8080'));
    await render(f);
    expect(f.isValid).toBe(true);
    expect(row.querySelector('[role="alert"]')).toBeNull();
    expect(toRequest(f.getValue()).apps).toEqual({
      tensorboard: 6006,
      web: 8080
    });
  });

  it("is filled from a chosen profile's apps", async () => {
    const options = launchOptions();
    options.profiles = [
      {
        name: 'tb',
        description: '',
        fields: { apps: { tensorboard: 6006 } },
        disabled: false
      }
    ];
    const f = await open(options);
    f.chooseProfile('tb');
    await render(f);
    const area = f.node.querySelector(
      'textarea[name="apps"]'
    ) as HTMLTextAreaElement;
    expect(area.value).toBe('tensorboard=6006\n');
    expect(toRequest(f.getValue()).apps).toEqual({ tensorboard: 6006 });
  });

  it('is not shown when the server does not list it', async () => {
    const options = launchOptions();
    options.fields = options.fields.filter(f => f.name !== 'apps');
    const f = await open(options);
    expect(f.node.querySelector('[name="apps"]')).toBeNull();
    expect(f.node.querySelector('[name="env"]')).not.toBeNull();
    expect('apps' in toRequest(f.getValue())).toBe(false);
  });
});
