import * as http from 'node:http';
import { describe, expect, it } from 'vitest';
import * as standIn from '../../src/api/httpForUndici';

describe('the node:http stand-in given to undici', () => {
  it("has Node's default limit of an answer's headers", () => {
    expect(standIn.maxHeaderSize).toBe(http.maxHeaderSize);
  });

  it('has an IncomingMessage that no stream taxprep hands undici is an instance of', () => {
    expect(standIn.IncomingMessage).not.toBe(http.IncomingMessage);
    expect(Object.getOwnPropertyNames(standIn.IncomingMessage.prototype)).toEqual(['constructor']);
  });
});
