import { ServerConnection } from '@jupyterlab/services';

import { ClusterAPIError, ClusterClient, errorOf, readText } from '../api';

function response(status: number, body: string): Response {
  return {
    status,
    ok: status >= 200 && status < 300,
    statusText: 'X',
    text: async () => body,
    body: null
  } as unknown as Response;
}

describe('ClusterClient', () => {
  const settings = ServerConnection.makeSettings({ baseUrl: 'http://h/base/' });
  let spy: jest.SpyInstance;

  afterEach(() => spy?.mockRestore());

  it('builds URLs under cluster/api', () => {
    const client = new ClusterClient(settings);
    expect(client.url('sessions', 'a b', 'containers', 'sub1', 'logs')).toBe(
      'http://h/base/cluster/api/sessions/a%20b/containers/sub1/logs'
    );
  });

  it('posts a launch and returns the session', async () => {
    spy = jest
      .spyOn(ServerConnection, 'makeRequest')
      .mockResolvedValue(response(201, '{"id": "x", "status": "PENDING"}'));
    const client = new ClusterClient(settings);
    const s = await client.launch({ size: 3, start_kernel: true });
    expect(s).toEqual({ id: 'x', status: 'PENDING' });
    const [url, init] = spy.mock.calls[0];
    expect(url).toBe('http://h/base/cluster/api/sessions');
    expect(init.method).toBe('POST');
    expect(JSON.parse(init.body)).toEqual({ size: 3, start_kernel: true });
  });

  it('turns error answers into errors naming the field', async () => {
    spy = jest
      .spyOn(ServerConnection, 'makeRequest')
      .mockResolvedValue(
        response(
          400,
          '{"message": "size: must be 1 to 16, got 20", "field": "size"}'
        )
      );
    const client = new ClusterClient(settings);
    await expect(client.launch({ size: 20 })).rejects.toMatchObject({
      name: 'ClusterAPIError',
      status: 400,
      field: 'size',
      message: 'size: must be 1 to 16, got 20'
    });
  });

  it('accepts 204 on terminate', async () => {
    spy = jest
      .spyOn(ServerConnection, 'makeRequest')
      .mockResolvedValue(response(204, ''));
    await expect(
      new ClusterClient(settings).terminate('x')
    ).resolves.toBeUndefined();
    expect(spy.mock.calls[0][1].method).toBe('DELETE');
  });

  it('says the server is gone when the request fails', async () => {
    spy = jest
      .spyOn(ServerConnection, 'makeRequest')
      .mockRejectedValue(new TypeError('Failed to fetch'));
    await expect(new ClusterClient(settings).agents()).rejects.toBeInstanceOf(
      ClusterAPIError
    );
  });

  it('asks for a tail and follow when streaming logs', async () => {
    spy = jest
      .spyOn(ServerConnection, 'makeRequest')
      .mockResolvedValue(response(200, 'line 1\nline 2\n'));
    const chunks: string[] = [];
    await new ClusterClient(settings).streamLogs('s', 'sub1', {
      tail: 50,
      onText: t => chunks.push(t)
    });
    expect(spy.mock.calls[0][0]).toBe(
      'http://h/base/cluster/api/sessions/s/containers/sub1/logs?follow=1&tail=50'
    );
    expect(chunks.join('')).toBe('line 1\nline 2\n');
  });
});

describe('ClusterClient stats', () => {
  const settings = ServerConnection.makeSettings({ baseUrl: 'http://h/base/' });
  let spy: jest.SpyInstance;

  afterEach(() => spy?.mockRestore());

  it('reads one sample, or follows the stream as Server-Sent Events', async () => {
    spy = jest
      .spyOn(ServerConnection, 'makeRequest')
      .mockResolvedValue(response(200, '{"session_id": "s", "hosts": {}}'));
    const client = new ClusterClient(settings);
    expect(await client.stats('s')).toEqual({ session_id: 's', hosts: {} });
    expect(spy.mock.calls[0][0]).toBe(
      'http://h/base/cluster/api/sessions/s/stats'
    );
    spy.mockResolvedValue(response(200, 'event: stats\ndata: {}\n\n'));
    const abort = new AbortController();
    const chunks: string[] = [];
    await client.streamStats('s', {
      signal: abort.signal,
      onText: t => chunks.push(t)
    });
    const [url, init] = spy.mock.calls[1];
    expect(url).toBe('http://h/base/cluster/api/sessions/s/stats?follow=1');
    expect(init.signal).toBe(abort.signal);
    expect(init.headers).toEqual({ Accept: 'text/event-stream' });
    expect(chunks.join('')).toBe('event: stats\ndata: {}\n\n');
  });
});

describe('errorOf', () => {
  it('explains a 404 without a JSON body', async () => {
    const error = await errorOf(response(404, ''));
    expect(error.message).toMatch(/server extension/);
  });

  it('keeps a plain-text body', async () => {
    expect((await errorOf(response(500, 'boom'))).message).toBe('boom');
  });
});

describe('readText', () => {
  it('reads a streamed body chunk by chunk', async () => {
    const chunks = [
      new TextEncoder().encode('a\n'),
      new TextEncoder().encode('b')
    ];
    let i = 0;
    const body = {
      getReader: () => ({
        read: async () =>
          i < chunks.length
            ? { done: false, value: chunks[i++] }
            : { done: true },
        releaseLock: () => undefined
      })
    };
    const seen: string[] = [];
    await readText({ body } as unknown as Response, t => seen.push(t));
    expect(seen).toEqual(['a\n', 'b']);
  });
});
