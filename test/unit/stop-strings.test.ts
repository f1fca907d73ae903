/** Stop strings over streamed text. */
import { describe, expect, it } from 'vitest';
import { StopStringMatcher } from '../../engine-bin/stop-strings.js';

describe('stop strings', () => {
  it('holds back a possible start of a stop string and releases it when it turns out not to be one', () => {
    const m = new StopStringMatcher(['END']);
    expect(m.push('abc E')).toEqual({ release: 'abc ', stoppedBy: null });
    expect(m.push('N')).toEqual({ release: '', stoppedBy: null });
    expect(m.push('x')).toEqual({ release: 'ENx', stoppedBy: null });
  });

  it('stops at a match split over several pushes, releasing only the text before it', () => {
    const m = new StopStringMatcher(['END', '\n\n']);
    expect(m.push('hello E').release).toBe('hello ');
    expect(m.push('ND and more')).toEqual({ release: '', stoppedBy: 'END' });
  });

  it('picks the earliest of several matches', () => {
    const m = new StopStringMatcher(['zz', 'b']);
    expect(m.push('abzz')).toEqual({ release: 'a', stoppedBy: 'b' });
  });

  it('flushes held text at the end, and passes everything through without stop strings', () => {
    const m = new StopStringMatcher(['END']);
    m.push('x EN');
    expect(m.flush()).toBe('EN');
    expect(new StopStringMatcher([]).push('anything')).toEqual({ release: 'anything', stoppedBy: null });
  });
});
