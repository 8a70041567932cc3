/** Colours derived from the account's brand colour so text on and around it keeps WCAG AA contrast. */
export interface BrandColors {
  brand: string;
  onBrand: string;
  accent: string;
}

const hex = /^#[0-9a-f]{6}$/i;
const fallbackBrand = '#1a56db';

function channels(color: string): [number, number, number] {
  return [1, 3, 5].map((i) => parseInt(color.slice(i, i + 2), 16)) as [number, number, number];
}

function luminance(color: string): number {
  const [r, g, b] = channels(color).map((c) => {
    const s = c / 255;
    return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
  }) as [number, number, number];
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

/** WCAG contrast ratio of two #rrggbb colours (1 to 21). */
export function contrast(a: string, b: string): number {
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x) as [number, number];
  return (hi + 0.05) / (lo + 0.05);
}

function darken(color: string, by: number): string {
  return `#${channels(color)
    .map((c) =>
      Math.round(c * (1 - by))
        .toString(16)
        .padStart(2, '0'),
    )
    .join('')}`;
}

/**
 * The brand colour, the text colour for buttons filled with it (white or black, whichever contrasts
 * more) and an accent for text and focus rings on white: the brand darkened until it reaches 4.5:1.
 */
export function brandColors(primaryColor: string): BrandColors {
  const brand = hex.test(primaryColor) ? primaryColor.toLowerCase() : fallbackBrand;
  const onBrand = contrast(brand, '#ffffff') >= contrast(brand, '#000000') ? '#ffffff' : '#000000';
  let accent = brand;
  for (let by = 0.1; contrast(accent, '#ffffff') < 4.5 && by <= 1; by += 0.1) accent = darken(brand, by);
  return { brand, onBrand, accent };
}
