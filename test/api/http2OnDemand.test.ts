import * as http2 from 'node:http2';
import { describe, expect, it } from 'vitest';
import * as onDemand from '../../src/api/http2OnDemand';

describe('the node:http2 stand-in given to undici', () => {
  it("has Node's values for every constant undici reads", () => {
    for (const [name, value] of Object.entries(onDemand.constants)) {
      expect([name, value]).toEqual([name, http2.constants[name as keyof typeof http2.constants]]);
    }
  });

  it('opens a session with the real node:http2', () => {
    const session = onDemand.connect('http://127.0.0.1:1');
    session.on('error', () => {});
    expect(typeof session.request).toBe('function');
    session.destroy();
  });
});
