/** A topic of the OpenAlex taxonomy table. */
export interface TaxonomyTopic {
  id: number;
  name: string;
  description: string | null;
  keywords: string[];
  subfieldId: number | null;
  subfield: string | null;
  fieldId: number | null;
  field: string | null;
  domainId: number | null;
  domain: string | null;
}
