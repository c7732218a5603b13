import { describe, expect, it } from 'vitest';
import { Site } from '../../../src/web/html.js';

const nav = (site: Site) => /<nav aria-label="Site">([\s\S]*?)<\/nav>/.exec(site.header)![1]!;

describe('the site header', () => {
  it('names research and the lab with what each needs, from the access table', () => {
    expect(nav(new Site({ edition: 'full', payments: false }))).toBe(
      '<a href="/">Periodic table</a><a href="/research">Research<span class="needs"> (Personal plan)</span></a><a href="/lab">Lab<span class="needs"> (Professional plan)</span></a><a href="/pricing">Pricing</a><a href="/docs">API</a><a href="/account">Account</a>',
    );
  });

  it('adds pay-per-call where the server takes payments', () => {
    const header = nav(new Site({ edition: 'full', payments: true }));
    expect(header).toContain('Research<span class="needs"> (Personal plan or per call)</span>');
    expect(header).toContain('Lab<span class="needs"> (Professional plan or per call)</span>');
  });

  it('in the older edition, names only what it serves', () => {
    const header = nav(new Site({ edition: 'enterprise', payments: false }));
    expect(header).not.toMatch(/research|lab|Personal|Professional/i);
    expect(header).toContain('<a href="/pricing">Pricing</a>');
  });

  it('puts the header, the title and the body on every page', () => {
    const site = new Site({ edition: 'full', payments: false });
    const page = site.errorPage('Not found', 'No such <page>.');
    expect(page).toContain(site.header);
    expect(page).toContain('<title>Not found · Research Intensity</title>');
    expect(page).toContain('<p>No such &lt;page&gt;.</p>');
  });
});
