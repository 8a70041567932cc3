import { describe, expect, it } from 'vitest';
import { brandColors, contrast } from '../api/pages/colors.js';

describe('the contrast ratio (WCAG 2.x relative luminance)', () => {
  it.each([
    ['#000000', '#ffffff', 21],
    ['#ffffff', '#000000', 21],
    ['#777777', '#ffffff', 4.48],
    ['#767676', '#ffffff', 4.54],
    ['#1a56db', '#ffffff', 6.18],
    ['#ffe600', '#000000', 16.57],
    ['#123456', '#123456', 1],
  ])('%s on %s is %f:1', (a, b, ratio) => {
    expect(contrast(a, b)).toBeCloseTo(ratio, 2);
  });

  it('reads upper- and lower-case hex alike', () => {
    expect(contrast('#FFE600', '#FFFFFF')).toBe(contrast('#ffe600', '#ffffff'));
  });
});

describe("the colours derived from a merchant's brand colour", () => {
  it.each([
    ['#FFE600', '#000000'],
    ['#888888', '#000000'],
    ['#3b82f6', '#000000'],
    ['#001F5B', '#ffffff'],
    ['#1a56db', '#ffffff'],
  ])('a %s button gets %s text, whichever contrasts more', (primaryColor, onBrand) => {
    expect(brandColors(primaryColor).onBrand).toBe(onBrand);
  });

  it('keeps a dark brand as its own accent and darkens a light one until it reads on white', () => {
    expect(brandColors('#001F5B').accent).toBe('#001f5b');
    const yellow = brandColors('#FFE600');
    expect(yellow.brand).toBe('#ffe600');
    expect(yellow.accent).not.toBe('#ffe600');
    expect(contrast(yellow.accent, '#ffffff')).toBeGreaterThanOrEqual(4.5);
  });

  it('falls back to the default blue for anything but #rrggbb', () => {
    expect(brandColors('yellow')).toEqual(brandColors('#1a56db'));
  });

  // Every colour on a 4096-step grid of the RGB cube: no brand colour yields unreadable buttons or links.
  const steps = Array.from({ length: 16 }, (_, i) => (i * 17).toString(16).padStart(2, '0'));
  const grid = steps.flatMap((r) => steps.flatMap((g) => steps.map((b) => `#${r}${g}${b}`)));

  it('button text reaches 4.5:1 on every brand colour, and the accent 4.5:1 on white', () => {
    for (const color of grid) {
      const { brand, onBrand, accent } = brandColors(color);
      expect(contrast(brand, onBrand), color).toBeGreaterThanOrEqual(4.5);
      expect(contrast(accent, '#ffffff'), color).toBeGreaterThanOrEqual(4.5);
    }
  });
});
