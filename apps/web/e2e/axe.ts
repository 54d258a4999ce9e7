// What "axe-clean" means for every browser test of the dashboard (the Playwright specs and the
// demo's node:test suites that drive playwright-core): no serious or critical violation of WCAG 2.0
// and 2.1, levels A and AA. The page must come from browser.newContext() (axe opens a page of its
// own in the same context).
import AxeBuilder from '@axe-core/playwright';

/** A page as axe takes it: @playwright/test's or playwright-core's. */
type Page = ConstructorParameters<typeof AxeBuilder>[0]['page'];

/** The serious and critical violations on `page`, one line each (empty when axe-clean). */
export async function seriousA11yViolations(page: Page): Promise<string[]> {
  const results = await new AxeBuilder({ page })
    .withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'])
    .analyze();
  return results.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map(
      (v) =>
        `${v.id} (${v.impact}): ${v.help} — ${v.nodes
          .slice(0, 3)
          .map((n) => n.target.join(' '))
          .join('; ')}`,
    );
}
