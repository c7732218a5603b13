// The lab answers' contracts (declared once in src/contracts, where the core infers its types).
export { DepthSchema, LabQuoteSchema, LabRunSchema } from '../../../contracts/lab.js';
