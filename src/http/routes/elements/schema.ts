// The element answers' contracts (declared once in src/contracts, where the core infers its types).
export {
  ElementHistoriesSchema,
  ElementHistorySchema,
  ElementListSchema,
  ElementPapersSchema,
  ElementSchema,
  ElementScoreSchema,
  SymbolsQuery,
} from '../../../contracts/elements.js';
