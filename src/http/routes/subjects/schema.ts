// The subject answers' contracts (declared once in src/contracts, where the core infers its types).
export {
  SubjectElementsSchema,
  SubjectHistorySchema,
  SubjectPapersSchema,
  SubjectSchema,
  SubjectSearchSchema,
} from '../../../contracts/subjects.js';
