import { ReactWidget } from '@jupyterlab/ui-components';
import { Widget } from '@lumino/widgets';
import * as React from 'react';

import {
  ClusterAPIError,
  ClusterClient,
  IContainerUsage,
  IGpuUsage
} from '../api';
import { Sparkline, sparklinePath } from '../sparkline';
import { gpuSummary, StatsModel, StatsStream } from '../stats';
import { ContainerStats, describeIO } from '../statsview';
import { FakeStatsClient, usage } from './fixtures';
import { act, render } from './render';

/** A sample at `time` (seconds) of the given hosts. */
function sample(
  time: number,
  hosts: { [host: string]: IContainerUsage | null }
) {
  return { session_id: 's', time, hosts };
}

function sse(event: string, data: unknown): string {
  return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

const flush = () => new Promise(resolve => setTimeout(resolve, 0));

const GIB = 1024 ** 3;

/** A GPU as the server reports it: utilization %, memory in GiB. */
function gpu(
  index: string,
  util: number | null,
  usedGiB: number,
  totalGiB = 16
): IGpuUsage {
  return {
    index,
    util_percent: util,
    mem_used: usedGiB * GIB,
    mem_total: totalGiB * GIB
  };
}

/** A container given two GPUs, both read. */
const withGpus = (util0: number | null, util1: number | null) =>
  usage({ gpus: [gpu('0', util0, 1), gpu('1', util1, 2)], gpu_note: '' });

/** A container given GPUs that could not be read. */
const NOTE = 'no GPU figures: nvidia-smi is not available in the container';
const withNote = () => usage({ gpus: [], gpu_note: NOTE });

describe('gpuSummary', () => {
  it('averages the utilization of the GPUs that report it, sums memory', () => {
    expect(gpuSummary(withGpus(30, 70))).toEqual({
      util: 50,
      memUsed: 3 * GIB,
      memTotal: 32 * GIB,
      gpus: [gpu('0', 30, 1), gpu('1', 70, 2)]
    });
    expect(gpuSummary(withGpus(null, 40))!.util).toBe(40);
    expect(gpuSummary(withGpus(null, null))!.util).toBeNull();
  });

  it('is null without GPU figures', () => {
    expect(gpuSummary(usage())).toBeNull();
    expect(gpuSummary(withNote())).toBeNull();
    expect(gpuSummary(null)).toBeNull();
  });
});

describe('StatsModel', () => {
  it('keeps only the samples of the window, per host', () => {
    const model = new StatsModel({ windowMs: 10000 });
    const changed = jest.fn();
    model.changed.connect(changed);
    for (let t = 100; t <= 120; t += 2) {
      model.add(sample(t, { main1: usage({ cpu_percent: t }), sub1: usage() }));
    }
    expect(changed).toHaveBeenCalledTimes(11);
    expect(model.hosts).toEqual(['main1', 'sub1']);
    expect(model.end).toBe(120000);
    // 110..120 s: the last 10 s
    expect(model.points('main1').map(p => p.t / 1000)).toEqual([
      110, 112, 114, 116, 118, 120
    ]);
    expect(model.latest('main1')!.cpu_percent).toBe(120);
    expect(model.points('sub1').length).toBe(6);
    expect(model.points('nope')).toEqual([]);
    expect(model.latest('nope')).toBeNull();
  });

  it('keeps null (not running) samples as gaps', () => {
    const model = new StatsModel();
    model.add(sample(1, { main1: usage(), sub1: usage() }));
    model.add(sample(3, { main1: usage(), sub1: null }));
    expect(model.latest('sub1')).toBeNull();
    expect(model.points('sub1').map(p => p.usage === null)).toEqual([
      false,
      true
    ]);
    expect(model.latest('main1')).not.toBeNull();
  });

  it('drops a host that stopped appearing once its samples are old', () => {
    const model = new StatsModel({ windowMs: 5000 });
    model.add(sample(1, { main1: usage(), sub1: usage() }));
    model.add(sample(10, { main1: usage() }));
    expect(model.points('sub1')).toEqual([]);
    expect(model.points('main1').length).toBe(1);
  });
});

describe('StatsStream', () => {
  let client: FakeStatsClient;
  let stream: StatsStream;

  beforeEach(() => {
    client = new FakeStatsClient();
    stream = new StatsStream({
      client: client as unknown as ClusterClient,
      sessionId: 's1',
      retryMs: 10
    });
  });

  afterEach(() => stream.dispose());

  it('feeds the model from stats events split across chunks', async () => {
    stream.start();
    stream.start(); // once
    expect(client.streams.map(s => s.ref)).toEqual(['s1']);
    const text =
      sse('stats', sample(5, { main1: usage() })) +
      ': keep-alive\n\n' +
      sse('stats', sample(7, { main1: usage({ cpu_percent: 3 }) }));
    client.streams[0].feed(text.slice(0, 30));
    client.streams[0].feed(text.slice(30));
    expect(stream.model.points('main1').length).toBe(2);
    expect(stream.model.latest('main1')!.cpu_percent).toBe(3);
  });

  it('keeps the GPU figures of a sample as the server sends them', async () => {
    stream.start();
    // the JSON of a container given one GPU (the server's Usage.to_dict)
    const served = {
      ...usage(),
      gpus: [
        { index: '0', util_percent: 12.0, mem_used: GIB, mem_total: 8 * GIB }
      ],
      gpu_note: ''
    };
    client.streams[0].feed(sse('stats', sample(5, { main1: served })));
    expect(stream.model.latest('main1')!.gpus).toEqual(served.gpus);
    expect(gpuSummary(stream.model.latest('main1'))!.util).toBe(12);
  });

  it('stops for good when the session ends', async () => {
    stream.start();
    client.streams[0].feed(sse('end', { message: 'session s1 ended' }));
    client.streams[0].end();
    await new Promise(resolve => setTimeout(resolve, 30));
    expect(stream.ended).toBe(true);
    expect(stream.model.message).toBe('session s1 ended');
    expect(client.streams.length).toBe(1);
  });

  it('does not retry when the server refuses (409: not running)', async () => {
    stream.start();
    client.streams[0].fail(new ClusterAPIError('not running', 409));
    await new Promise(resolve => setTimeout(resolve, 30));
    expect(client.streams.length).toBe(1);
    expect(stream.model.message).toBe('not running');
  });

  it('reopens a stream that broke, and aborts it when disposed', async () => {
    stream.start();
    client.streams[0].fail(new Error('network'));
    await new Promise(resolve => setTimeout(resolve, 30));
    expect(client.streams.length).toBe(2);
    stream.dispose();
    await flush();
    expect(client.streams[1].aborted).toBe(true);
    expect(client.open).toEqual([]);
  });
});

describe('sparklines', () => {
  it('maps points to the box, time left to right, values bottom to top', () => {
    const { d, count } = sparklinePath(
      [
        { t: 0, v: 50 }, // before the window: skipped
        { t: 1000, v: 0 },
        { t: 6000, v: 100 },
        { t: 8000, v: null }, // a gap
        { t: 11000, v: 400 } // clipped to max
      ],
      { max: 200, end: 11000, windowMs: 10000, width: 100, height: 20 }
    );
    expect(count).toBe(3);
    expect(d).toBe('M0 20 L50 10 M100 0');
  });

  it('renders an SVG labelled for screen readers, with its point count', async () => {
    const widget = ReactWidget.create(
      <Sparkline
        points={[
          { t: 1000, v: 10 },
          { t: 2000, v: 20 }
        ]}
        max={100}
        end={2000}
        windowMs={1000}
        label="CPU use of main1"
      />
    );
    await act(async () => Widget.attach(widget, document.body));
    await render(widget);
    const svg = widget.node.querySelector('svg')!;
    expect(svg.getAttribute('role')).toBe('img');
    expect(svg.getAttribute('aria-label')).toBe('CPU use of main1');
    expect(svg.getAttribute('data-points')).toBe('2');
    expect(svg.querySelector('path')!.getAttribute('d')).toBe(
      'M0 14.4 L72 12.8'
    );
    await act(async () => widget.dispose());
  });
});

describe('ContainerStats', () => {
  let model: StatsModel;
  let widget: Widget;

  beforeEach(async () => {
    model = new StatsModel();
    widget = ReactWidget.create(
      <div>
        <ContainerStats model={model} host="main1" cpus={0.5} />
        <ContainerStats model={model} host="sub1" cpus={0.5} />
      </div>
    );
    await act(async () => Widget.attach(widget, document.body));
    await render(widget);
  });

  afterEach(async () => {
    await act(async () => widget.dispose());
  });

  const of = (host: string) =>
    widget.node.querySelector(`.jp-ClusterStats[data-host="${host}"]`)!;

  it('shows CPU and memory graphs with the values now, IO in the tooltip', async () => {
    expect(of('main1').textContent).toBe('reading use…');
    await act(async () => {
      model.add(sample(10, { main1: usage({ cpu_percent: 12 }), sub1: null }));
      model.add(sample(12, { main1: usage(), sub1: null }));
    });
    const main1 = of('main1');
    expect(main1.textContent).toContain('CPU 47%');
    expect(main1.textContent).toContain('MEM 120m / 512m');
    const svgs = [...main1.querySelectorAll('svg[role="img"]')];
    expect(svgs.length).toBe(2);
    expect(svgs[0].getAttribute('aria-label')).toBe(
      'CPU use of main1 over the last 5 minutes: 47% now'
    );
    expect(svgs[0].getAttribute('data-points')).toBe('2');
    expect(svgs[1].getAttribute('aria-label')).toMatch(/Memory use of main1/);
    expect(main1.getAttribute('title')).toBe(describeIO(usage()));
    expect(main1.getAttribute('title')).toBe(
      'Network: 1.5m received, 300k sent\nBlock IO: 10m read, 2m written\n12 processes'
    );
    expect(of('sub1').textContent).toBe('not running');
    // no GPUs: no GPU graph, no note
    expect(main1.querySelector('.jp-ClusterStats-gpu')).toBeNull();
    expect(main1.querySelector('.jp-ClusterStats-note')).toBeNull();
  });

  it('graphs the mean GPU utilization with GPU memory as text', async () => {
    await act(async () => {
      model.add(sample(10, { main1: withGpus(10, 30), sub1: usage() }));
      model.add(sample(12, { main1: withGpus(30, 70), sub1: usage() }));
    });
    const main1 = of('main1');
    const svgs = [...main1.querySelectorAll('svg[role="img"]')];
    expect(svgs.length).toBe(3);
    const graph = main1.querySelector('svg.jp-ClusterStats-gpu')!;
    expect(graph).toBe(svgs[2]);
    expect(graph.getAttribute('data-points')).toBe('2');
    // 20% then 50% of 100%, in a 16 px high box; the newest at the right
    expect(graph.querySelector('path')!.getAttribute('d')).toMatch(
      /^M\S+ 12\.8 L72 8$/
    );
    expect(main1.textContent).toContain('CPU 47%');
    expect(main1.textContent).toContain('MEM 120m / 512m');
    expect(main1.textContent).toContain('GPU 50% · 3g / 32g');
    expect(graph.getAttribute('aria-label')).toBe(
      'GPU use of main1 over the last 5 minutes: GPU 50% · 3g / 32g'
    );
    expect(graph.parentElement!.getAttribute('title')).toBe(
      'GPU 0: 30%, memory 1g / 16g\nGPU 1: 70%, memory 2g / 16g'
    );
    expect(main1.querySelector('.jp-ClusterStats-note')).toBeNull();
    // sub1 has no GPUs: as without
    expect(of('sub1').querySelectorAll('svg').length).toBe(2);
    expect(of('sub1').textContent).not.toContain('GPU');
  });

  it('shows the note instead of a graph when GPUs could not be read', async () => {
    await act(async () => {
      model.add(sample(10, { main1: withNote(), sub1: usage() }));
    });
    const main1 = of('main1');
    expect(main1.querySelectorAll('svg').length).toBe(2);
    expect(main1.querySelector('.jp-ClusterStats-gpu')).toBeNull();
    expect(main1.querySelector('.jp-ClusterStats-note')!.textContent).toBe(
      NOTE
    );
    expect(main1.textContent).not.toContain('GPU 0');
  });

  it('keeps the GPU graph, with a gap, when a reading fails', async () => {
    await act(async () => {
      model.add(sample(10, { main1: withGpus(50, 50), sub1: usage() }));
      model.add(sample(12, { main1: withNote(), sub1: usage() }));
      model.add(sample(14, { main1: withGpus(null, null), sub1: usage() }));
    });
    const main1 = of('main1');
    const graph = main1.querySelector('svg.jp-ClusterStats-gpu')!;
    // only the first sample has a utilization: the other two are gaps
    expect(graph.getAttribute('data-points')).toBe('1');
    expect(main1.textContent).toContain('GPU – · 3g / 32g');
    await act(async () => {
      model.add(sample(16, { main1: withNote(), sub1: usage() }));
    });
    expect(main1.textContent).toContain('GPU –');
    expect(main1.querySelector('.jp-ClusterStats-note')!.textContent).toBe(
      NOTE
    );
  });

  it('says why no samples come', async () => {
    await act(async () => {
      model.message = 'not running';
    });
    expect(of('main1').textContent).toBe('not running');
  });
});
