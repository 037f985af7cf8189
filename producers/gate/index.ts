/** The live gate's protocol: declare a comparison, await the processors' verdict. */
export {
  comparisonId,
  declareComparison,
  declaration,
  verdictOn,
  waitForDecisionStep,
  waitForVerdict,
  type DeclareInput,
  type Declared,
} from './live.ts';
