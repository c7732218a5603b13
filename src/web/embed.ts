import { type Html, html } from './html.js';

/**
 * "Embed it": an element's or subject's RIS badge (core/badges.ts) as HTML and as Markdown to copy
 * into a page or a README, each a link to the page it stands for. Read-only text areas, since the
 * pages run no script: a tap selects the text, and they wrap at a phone's width.
 */
export function embedSnippet(options: {
  publicUrl: string;
  /** The page the badge stands for (its canonical_url). */
  page: string;
  /** The badge's and the sparkline's paths (badgePath). */
  badge: string;
  sparkline: string;
  /** What the image shows, as its alt text says it (the number changes, so it is not in it). */
  alt: string;
  /** Whether the badge itself needs a feed token (a subject's scores); the sparkline always does. */
  tokenNeeded: boolean;
  /** The plan a feed token's account needs, as the pages name it (Personal, or Enterprise). */
  plan: string;
}): Html {
  const { publicUrl, page, alt, tokenNeeded, plan } = options;
  const token = '?token=FEED_TOKEN';
  const src = `${publicUrl}${options.badge}${tokenNeeded ? token : ''}`;
  const snippet = `<a href="${page}"><img src="${src}" alt="${alt}" height="20"></a>`;
  const markdown = `[![${alt}](${src})](${page})`;
  const line = `${publicUrl}${options.sparkline}${token}`;
  return html`<section class="embed" aria-labelledby="embed">
<h2 id="embed">Embed its RIS</h2>
${tokenNeeded ? html`` : html`<p><img src="${options.badge}" alt="${alt}" height="20"></p>`}
<p class="muted">A badge redrawn at each publication of the data, the data version in its title. Copy it into a page or a README:</p>
<label for="embed-html">HTML</label>
<textarea id="embed-html" readonly rows="3">${snippet}</textarea>
<label for="embed-markdown">Markdown</label>
<textarea id="embed-markdown" readonly rows="3">${markdown}</textarea>
<p class="muted">${
    tokenNeeded
      ? html`It needs a feed token of an account on the ${plan} plan in place of <code>FEED_TOKEN</code>, as a subject's scores do: make one on <a href="/account">your account</a> (an API key never goes in it). `
      : html``
  }Its RIS by year as a sparkline: <code class="url">${line}</code>, with a feed token of an account on the ${plan} plan (<a href="/account">your account</a>); whoever sees the page that holds it sees the history too.</p>
</section>`;
}
