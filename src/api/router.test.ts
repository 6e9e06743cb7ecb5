import { describe, expect, it } from 'vitest';
import { Router } from './router.js';

// The one path matcher of the API and the cabinet.
describe('Router', () => {
  const route = (method: string, path: string) => ({ method, path });

  it('refuses two definitions of one route, so none can shadow another by registration order', () => {
    expect(() => new Router([route('GET', '/keys'), route('GET', '/keys')])).toThrow('two routes for GET /keys');
    expect(() => new Router([route('GET', '/p/{id}'), route('GET', '/p/{id}')])).toThrow('two routes for GET /p/{id}');
    expect(() => new Router([route('GET', '/keys'), route('POST', '/keys')])).not.toThrow();
  });

  it('lets a fixed path win over a template, and answers 405 with what the path allows', () => {
    const r = new Router([route('GET', '/p/{id}'), route('GET', '/p/settings'), route('PUT', '/p/settings')]);
    expect(r.match('GET', '/p/settings')).toMatchObject({ kind: 'found', def: { path: '/p/settings' } });
    expect(r.match('GET', '/p/abc/')).toMatchObject({ kind: 'found', params: { id: 'abc' } });
    expect(r.match('DELETE', '/p/settings')).toEqual({ kind: 'method-not-allowed', allow: ['GET', 'PUT'] });
    expect(r.match('GET', '/p/%zz')).toEqual({ kind: 'not-found' });
  });
});
