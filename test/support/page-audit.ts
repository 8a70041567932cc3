import type { Page } from 'playwright-core';
import { expect } from 'vitest';
import { contrast } from '../../api/pages/colors.js';

// What WCAG 2.1 AA asks of a rendered page that a browser can tell, audited from the DOM and computed
// styles (test/hosted-pages-a11y.browser.test.ts runs it on every page state).

/**
 * Helpers run in the page, as text: these tests' TypeScript has no DOM types (and the page's CSP does not
 * apply to Playwright's evaluation). A background is the nearest painted one behind the element.
 */
const inPage = String.raw`
  const stops = () => [...document.querySelectorAll('a[href], button, input:not([type=hidden]), select, textarea')];
  const backgroundOf = (el) => {
    for (let e = el; e; e = e.parentElement) {
      const { backgroundColor } = getComputedStyle(e);
      if (backgroundColor !== 'rgba(0, 0, 0, 0)') return backgroundColor;
    }
    return 'rgb(255, 255, 255)';
  };
  const filterOf = (el) => {
    for (let e = el; e; e = e.parentElement) if (getComputedStyle(e).filter !== 'none') return getComputedStyle(e).filter;
    return 'none';
  };
  const lookOf = (el) => ({
    text: el.textContent.trim().replace(/\s+/g, ' ').slice(0, 60),
    color: getComputedStyle(el).color,
    background: backgroundOf(el),
    filter: filterOf(el),
  });
  const ringOf = (el) => {
    const s = getComputedStyle(el);
    return {
      outline: s.outlineStyle === 'none' ? 'none' : [s.outlineStyle, s.outlineWidth, s.outlineColor].join(' '),
      outlineColor: s.outlineColor,
      shadow: s.boxShadow,
      around: backgroundOf(el.parentElement),
    };
  };
`;
const inBrowser = <T>(page: Page, body: string) => page.evaluate<T>(`(() => { ${inPage} ${body} })()`);

interface Look {
  text: string;
  color: string;
  background: string;
  filter: string;
}
interface Ring {
  outline: string;
  outlineColor: string;
  shadow: string;
  around: string;
}

/** `rgb(255, 230, 0)` as `#ffe600`; a translucent colour would make the ratio meaningless, so it fails. */
function hexOf(rgb: string): string {
  const [r = NaN, g = NaN, b = NaN, alpha = 1] = (rgb.match(/[\d.]+/g) ?? []).map(Number);
  expect(alpha, `${rgb} is opaque`).toBe(1);
  return `#${[r, g, b].map((c) => Math.round(c).toString(16).padStart(2, '0')).join('')}`;
}
const ratio = (a: string, b: string) => contrast(hexOf(a), hexOf(b));

/** Every piece of text (1.4.3): at least 4.5:1 on what is behind it, with no filter changing the colours. */
async function expectReadableText(page: Page) {
  const looks = await inBrowser<Look[]>(
    page,
    `return [...document.body.querySelectorAll('*')]
      .filter((el) => [...el.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim() !== ''))
      .map(lookOf);`,
  );
  expect(looks.length).toBeGreaterThan(2);
  for (const look of looks) expectReadable(look);
}

function expectReadable(look: Look) {
  expect(look.filter, `"${look.text}": a filter changes its colours`).toBe('none');
  const what = `"${look.text}": ${look.color} on ${look.background}`;
  expect(ratio(look.color, look.background), what).toBeGreaterThanOrEqual(4.5);
}

/** Every control, link and button (4.1.2, 1.3.1): a role and a name, as the browser computes them. */
async function expectNamedControls(page: Page) {
  for (const control of await page
    .locator('a[href], button, input:not([type=hidden]), select, textarea')
    .all())
    expect(await control.ariaSnapshot()).toMatch(/^- (textbox|button|link|combobox|checkbox|radio) "[^"]+"/);
  // Links inside sentences are exempt from target sizes; everything else is at least 44 px both ways.
  for (const target of await page.locator('button, .button, input:not([type=hidden])').all()) {
    const box = await target.boundingBox();
    expect(Math.min(box?.width ?? 0, box?.height ?? 0), 'a 44 px target').toBeGreaterThanOrEqual(44);
  }
  // A link inside text is told apart by its underline, not by its colour alone (1.4.1).
  const decorations = await inBrowser<string[]>(
    page,
    `return [...document.querySelectorAll('a[href]:not(.button)')].map((a) => getComputedStyle(a).textDecorationLine);`,
  );
  for (const decoration of decorations) expect(decoration).toContain('underline');
  for (const field of await page.locator('input:not([type=hidden])').all())
    expect(await field.getAttribute('required'), 'required fields say so').not.toBeNull();
}

const focusState = (page: Page) =>
  inBrowser<{ active: number; rings: Ring[] }>(
    page,
    'const all = stops(); return { active: all.indexOf(document.activeElement), rings: all.map(ringOf) };',
  );

/**
 * Tab reaches every control in document order (2.1.1, 2.4.3) and each shows a focus ring it did not show
 * unfocused (2.4.7), at 3:1 against what is around it (1.4.11).
 */
async function expectVisibleFocus(page: Page) {
  const focused = new Map<number, Ring>();
  const unfocused = new Map<number, Ring>();
  const order: number[] = [];
  const record = ({ active, rings }: { active: number; rings: Ring[] }) => {
    rings.forEach((ring, i) => i !== active && !unfocused.has(i) && unfocused.set(i, ring));
    if (active < 0 || focused.has(active)) return;
    focused.set(active, rings[active]!);
    order.push(active);
  };
  const first = await focusState(page);
  const { rings } = first;
  record(first);
  for (let i = 0; i < 2 * rings.length + 2 && focused.size < rings.length; i += 1) {
    await page.keyboard.press('Tab');
    record(await focusState(page));
  }
  expect(focused.size, 'Tab reaches every control').toBe(rings.length);
  const start = order.indexOf(0);
  expect([...order.slice(start), ...order.slice(0, start)]).toEqual([...rings.keys()]);
  for (const [i, on] of focused) {
    const off = unfocused.get(i)!;
    expect(on.outline, 'a focus ring').not.toBe('none');
    expect(on.outline !== off.outline || on.shadow !== off.shadow, 'focus changes the ring').toBe(true);
    expect(ratio(on.outlineColor, on.around), 'the ring at 3:1').toBeGreaterThanOrEqual(3);
  }
}

/** What every page state meets, whatever it shows. */
export async function expectAccessible(page: Page, lang: string) {
  expect(await page.locator('html').getAttribute('lang')).toBe(lang);
  expect(await page.getByRole('main').count()).toBe(1);
  const h1 = page.getByRole('heading', { level: 1 });
  expect(await h1.count()).toBe(1);
  expect(await page.title(), 'the title names the page').toContain((await h1.textContent())?.trim());
  await expectNamedControls(page);
  await expectReadableText(page);
  const width = await page.evaluate<number>('document.documentElement.scrollWidth');
  expect(width, 'no sideways scrolling at 320 px').toBeLessThanOrEqual(320);
  await expectVisibleFocus(page);
}

/** Buttons filled with the brand: readable text, hovered too, and an edge that stands out from the panel. */
export async function expectBrandedButtons(page: Page) {
  const buttons = await page.locator('.button').all();
  expect(buttons.length).toBeGreaterThan(0);
  for (const [i, button] of buttons.entries()) {
    await button.hover();
    expectReadable(await inBrowser<Look>(page, `return lookOf(document.querySelectorAll('.button')[${i}]);`));
    const edge = await inBrowser<{ border: string; background: string; around: string }>(
      page,
      `const el = document.querySelectorAll('.button')[${i}]; const s = getComputedStyle(el);
       return { border: s.borderTopColor, background: s.backgroundColor, around: backgroundOf(el.parentElement) };`,
    );
    // 1.4.11 lets a button's text identify it; an edge at 3:1 keeps a light brand's button from melting
    // into the white panel.
    const edgeRatio = Math.max(ratio(edge.border, edge.around), ratio(edge.background, edge.around));
    expect(edgeRatio, `button ${i}'s edge on ${edge.around}`).toBeGreaterThanOrEqual(3);
  }
}
