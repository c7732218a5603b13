/**
 * A DOI as a user writes it, read one way wherever the service takes one: bare (10.1021/x), with
 * the `doi:` scheme in any case (doi:10.1021/x, DOI: 10.1021/x), or as a resolver URL
 * (https://doi.org/10.1021/x, dx.doi.org). DOIs are case-insensitive; the corpus keeps them lower-cased.
 */
export function doiOf(input: string): string | null {
  const doi = input
    .trim()
    .replace(/^(?:(?:https?:\/\/)?(?:dx\.)?doi\.org\/|doi:\s*)/i, '')
    .toLowerCase();
  return /^10\.\d{4,9}\//.test(doi) ? doi : null;
}
